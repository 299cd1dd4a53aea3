// A request's time limit holds whatever the garbage collector does: Node 20 lets the timeout signal
// of AbortSignal.any([signal, AbortSignal.timeout(ms)]) be collected, after which it never fires (a
// server that hung after its headers then held the render and its socket). These run with collections
// forced every 25 ms, and fail on that composite.
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
import { waitFor } from '../../helpers/wait.ts';

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
  const timer = setInterval(gc, 25);
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

async function failure(work: Promise<unknown>): Promise<{ code: string }> {
  const e = await collecting(work).then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(RenderError);
  return { code: (e as RenderError).code };
}

const waitClosed = (url: string) =>
  waitFor(`the connection of ${url} closed`, () => closed.includes(url), { timeoutMs: 20_000 });

// Before the headers, fetch itself gives up at the abort; whether undici then closes the connection or
// keeps it for a late answer is its own choice (seen both ways on Node 20), so only the outcome is checked.
it('a server that never answers is cut off at the limit', async () => {
  const { code } = await failure(
    call(`${base}/silent`, {}, opts(new AbortController().signal, 300)),
  );
  expect(code).toBe('BACKEND_TIMEOUT');
});

it('a server that hangs after its headers is cut off at the limit, its connection closed', async () => {
  const o = opts(new AbortController().signal, 300);
  const { code } = await failure(
    call(`${base}/body`, {}, o).then((res) => readBounded(res, 1 << 20, o)),
  );
  expect(code).toBe('BACKEND_TIMEOUT');
  await waitClosed('/body');
});

it("the render's abort stops a body being read", async () => {
  const ctl = new AbortController();
  const o = opts(ctl.signal, 60_000);
  setTimeout(() => ctl.abort(), 300);
  const { code } = await failure(
    call(`${base}/abort`, {}, o).then((res) => readBounded(res, 1 << 20, o)),
  );
  expect(code).toBe('RENDER_ABORTED');
  await waitClosed('/abort');
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
    await waitClosed('/download');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
