// A request's time limit holds whatever the garbage collector does: Node 20 lets the timeout signal
// of AbortSignal.any([signal, AbortSignal.timeout(ms)]) be collected, after which it never fires (a
// server that hung after its headers then held the render and its socket). These run with collections
// forced every few milliseconds, and fail on that composite.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, readBounded } from '../../../src/backends/shared/http.ts';
import { saveOutput } from '../../../src/backends/shared/output.ts';
import { RenderError } from '../../../src/backends/types.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let server: http.Server;
let base = '';
const closed: string[] = [];
beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.socket.on('close', () => closed.push(req.url ?? ''));
    if (req.url === '/silent') return; // never answers
    const type = req.url === '/download' ? 'video/mp4' : 'text/event-stream';
    res.writeHead(200, { 'content-type': type, 'content-length': '1000' });
    res.write('data: first\n\n'); // then hangs
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function collecting<T>(work: Promise<T>): Promise<T> {
  const timer = setInterval(gc, 10);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

const opts = (signal: AbortSignal, timeoutMs: number) => ({
  signal,
  timeoutMs,
  redact: (t: string) => t,
  what: 'test request',
});

async function failure(work: Promise<unknown>): Promise<{ code: string; ms: number }> {
  const t0 = Date.now();
  const e = await collecting(work).then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(RenderError);
  return { code: (e as RenderError).code, ms: Date.now() - t0 };
}

const waitClosed = async (url: string) => {
  for (let i = 0; i < 200 && !closed.includes(url); i++)
    await new Promise((r) => setTimeout(r, 10));
  return closed.includes(url);
};

it('a server that never answers is cut off at the limit', async () => {
  const { code, ms } = await failure(
    call(`${base}/silent`, {}, opts(new AbortController().signal, 300)),
  );
  expect(code).toBe('BACKEND_TIMEOUT');
  expect(ms).toBeLessThan(3_000);
  expect(await waitClosed('/silent')).toBe(true);
});

it('a server that hangs after its headers is cut off at the limit, its connection closed', async () => {
  const o = opts(new AbortController().signal, 300);
  const { code, ms } = await failure(
    call(`${base}/body`, {}, o).then((res) => readBounded(res, 1 << 20, o)),
  );
  expect(code).toBe('BACKEND_TIMEOUT');
  expect(ms).toBeLessThan(3_000);
  expect(await waitClosed('/body')).toBe(true);
});

it("the render's abort stops a body being read", async () => {
  const ctl = new AbortController();
  const o = opts(ctl.signal, 60_000);
  setTimeout(() => ctl.abort(), 300);
  const { code } = await failure(
    call(`${base}/abort`, {}, o).then((res) => readBounded(res, 1 << 20, o)),
  );
  expect(code).toBe('RENDER_ABORTED');
  expect(await waitClosed('/abort')).toBe(true);
});

it('a result download that hangs is cut off at the limit', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-deadline-'));
  try {
    const { code } = await failure(
      saveOutput(`${base}/download`, {
        ...opts(new AbortController().signal, 300),
        workDir: dir,
        contentType: 'video/mp4',
        limitBytes: 1 << 20,
        origin: null,
        allowPrivate: true,
      }),
    );
    expect(code).toBe('BACKEND_TIMEOUT');
    expect(await waitClosed('/download')).toBe(true);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
