// Logs are written asynchronously (src/cli/logger.ts), so each way out of the process must flush them:
// no access line may be lost between a request and SIGTERM, nor the lines before a crash.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/db.ts';
import { openEvents } from '../helpers/event-stream.ts';
import { ADMIN } from '../helpers/service.ts';
import { spawnService } from '../helpers/spawned.ts';
import { waitFor } from '../helpers/wait.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-logs-'));
fs.chmodSync(dir, 0o755);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('every request answered before SIGTERM has its access line in the output', async () => {
  const svc = await spawnService({
    RENDERGATE_DATA_DIR: path.join(dir, 'data'),
    RENDERGATE_ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'info',
  });
  try {
    const N = 1500;
    let next = 0;
    // 16 clients at once, so that lines pile up in the asynchronous buffer as they do under load.
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < N) {
          const id = `logtest-${next++}`;
          const r = await fetch(`${svc.base}/v1/me`, { headers: { 'x-request-id': id } });
          expect(r.status).toBe(401);
          await r.arrayBuffer();
        }
      }),
    );
    svc.proc.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
    const lines = svc
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    const completed = new Set(
      lines.filter((l) => l.msg === 'request completed').map((l) => l.reqId),
    );
    const missing = Array.from({ length: N }, (_, i) => `logtest-${i}`).filter(
      (id) => !completed.has(id),
    );
    expect(missing).toEqual([]);
    // Lines are JSON when stdout is not a terminal, and the shutdown itself is logged to the end.
    expect(lines.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM')).toBe(true);
  } finally {
    if (svc.proc.exitCode === null) svc.proc.kill('SIGKILL');
  }
}, 120_000);

it('a stream its route took over (live events, MCP) has its access line when it ends', async () => {
  const dbh = await freshDatabase();
  const svc = await spawnService({
    DATABASE_URL: dbh.url,
    RENDERGATE_ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'info',
  });
  try {
    const call = async (p: string, init: RequestInit & { key?: string }) => {
      const r = await fetch(`${svc.base}${p}`, {
        ...init,
        headers: {
          authorization: `Bearer ${init.key ?? ADMIN}`,
          'content-type': 'application/json',
          ...(init.headers as Record<string, string>),
        },
      });
      expect(r.status, await r.clone().text()).toBeLessThan(300);
      return r;
    };
    const account = (await (
      await call('/admin/v1/accounts', {
        method: 'POST',
        body: JSON.stringify({ email: 'streams@example.test' }),
      })
    ).json()) as { id: string };
    await call(`/admin/v1/accounts/${account.id}/credits`, {
      method: 'POST',
      body: JSON.stringify({ amountCents: 1_000 }),
    });
    const { key } = (await (
      await call(`/admin/v1/accounts/${account.id}/keys`, { method: 'POST', body: '{}' })
    ).json()) as { key: string };
    const created = (await (
      await call('/v1/generations', {
        method: 'POST',
        key,
        headers: { 'idempotency-key': 'logs-events-1' },
        body: JSON.stringify({
          modelId: 'rendergate/shot-list',
          inputs: { text: 'A gull lands.' },
        }),
      })
    ).json()) as { id: string };
    const events = await openEvents(svc.base, key, created.id, { 'x-request-id': 'sse-1' });
    expect(events.status).toBe(200);
    await waitFor('the stream to end', () => events.ended, { timeoutMs: 30_000 });
    await call('/mcp', {
      method: 'POST',
      key,
      headers: { accept: 'application/json, text/event-stream', 'x-request-id': 'mcp-1' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    svc.proc.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
    const done = svc
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'request completed');
    const line = (id: string) => done.find((l) => l.reqId === id);
    expect(line('sse-1')).toMatchObject({ res: { statusCode: 200 } });
    expect(line('sse-1').req.url).toBe(`/v1/generations/${created.id}/events`);
    expect(line('mcp-1')).toMatchObject({ res: { statusCode: 200 } });
    expect(typeof line('mcp-1').responseTime).toBe('number');
  } finally {
    if (svc.proc.exitCode === null) svc.proc.kill('SIGKILL');
    await dbh.drop();
  }
}, 120_000);

it('a crash logs the error after every line before it, then exits 1', async () => {
  const script = path.join(dir, 'crash.mts');
  fs.writeFileSync(
    script,
    `
    import { createProcessLog, exitOnFatal } from ${JSON.stringify(path.join(ROOT, 'src/cli/logger.ts'))};
    const logging = createProcessLog('info');
    exitOnFatal(logging);
    for (let i = 0; i < 5000; i++) logging.log.info({ i }, 'line');
    setTimeout(() => { throw new Error('boom'); }, 0);
  `,
  );
  const proc = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // A reader that falls behind: the pipe fills, so a write is still under way when the crash comes.
  proc.stdout.pause();
  setTimeout(() => proc.stdout.resume(), 1_500);
  proc.stdout.on('data', (d) => {
    out += d;
  });
  const code = await new Promise((r) => proc.on('close', r));
  expect(code).toBe(1);
  const lines = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(lines.filter((l) => l.msg === 'line').map((l) => l.i)).toEqual(
    Array.from({ length: 5000 }, (_, i) => i),
  );
  expect(lines.at(-1)).toMatchObject({
    level: 60,
    msg: 'uncaught exception; exiting',
    err: { message: 'boom' },
  });
}, 60_000);

it('a terminal gets readable lines (pino-pretty, in a worker thread), flushed before the exit as well', async () => {
  const script = path.join(dir, 'pretty.mts');
  // A pipe stands in for the terminal: `pretty` is what process.stdout.isTTY would choose.
  fs.writeFileSync(
    script,
    `
    import { createProcessLog } from ${JSON.stringify(path.join(ROOT, 'src/cli/logger.ts'))};
    const logging = createProcessLog('info', { pretty: true });
    for (let i = 0; i < 500; i++) logging.log.info({ i }, 'pretty line ' + i);
    const req = { method: 'GET', url: '/history', host: 'h', remoteAddress: '::1', remotePort: 1 };
    logging.log.info(
      { req, res: { statusCode: 200 }, responseTime: 3.25, reqId: 'req-7' },
      'request completed',
    );
    logging.exit(0);
  `,
  );
  const proc = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => {
    out += d;
  });
  expect(await new Promise((r) => proc.on('exit', r))).toBe(0);
  const plain = stripVTControlCharacters(out);
  expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(\d+\): pretty line 0 \{"i":0\}$/m);
  expect(plain).toMatch(/pretty line 499 \{"i":499\}$/m);
  // A request is one line (pretty-log.mjs), not its request and answer objects key by key.
  expect(plain).toMatch(/^\[[\d:.]+\] INFO \(\d+\): GET \/history 200 3\.3 ms req-7$/m);
  expect(plain).not.toMatch(/remoteAddress/);
  expect(plain).not.toMatch(/^\{"level"/m);
}, 60_000);

it('a process.exit() that does not go through the logger still writes every line', async () => {
  const script = path.join(dir, 'exit.mts');
  // Lines of a few hundred bytes, as access lines are: some sit in sonic-boom's buffer, and a write may
  // be under way, when the exit comes. To a file: a write under way to a pipe
  // whose reader has stopped reading cannot finish once the process exits (the exit paths of
  // createProcessLog wait for it; a bare process.exit cannot, with pino's own destination either).
  fs.writeFileSync(
    script,
    `
    import { createProcessLog } from ${JSON.stringify(path.join(ROOT, 'src/cli/logger.ts'))};
    const logging = createProcessLog('info');
    const pad = 'x'.repeat(300);
    for (let i = 0; i < 3000; i++) logging.log.info({ i, pad }, 'line');
    setTimeout(() => {
      for (let i = 3000; i < 3100; i++) logging.log.info({ i, pad }, 'line');
      process.exit(0);
    }, 5);
  `,
  );
  const outFile = path.join(dir, 'exit.log');
  const fd = fs.openSync(outFile, 'w');
  const proc = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    stdio: ['ignore', fd, 'pipe'],
  });
  fs.closeSync(fd);
  expect(await new Promise((r) => proc.on('close', r))).toBe(0);
  const lines = fs
    .readFileSync(outFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  // Every line, whole. In order too, unless a write was under way at the exit: the synchronous flush
  // cannot wait for it, so what it writes may land before that write's lines (as with pino's own).
  expect(lines.map((l) => l.i).sort((a, b) => a - b)).toEqual(
    Array.from({ length: 3100 }, (_, i) => i),
  );
}, 60_000);
