// A request answered before its body has arrived (a wrong key on an upload): the client gets the
// answer, not a reset (src/http/lingering-close.ts), and a small body's connection stays open. The service runs as its own process, as in
// production: in one process with the client, the two take turns on one event loop and the race that
// loses the answer does not happen.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/db.ts';
import { spawnService, type Spawned } from '../helpers/spawned.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: Spawned;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-early-'));

beforeAll(async () => {
  dbh = await freshDatabase();
  svc = await spawnService({
    DATABASE_URL: dbh.url,
    RENDERGATE_DATA_DIR: path.join(dir, 'data'),
    RENDERGATE_ADMIN_TOKEN: 'early-answer-admin-token-0123456789',
    LOG_LEVEL: 'warn',
  });
}, 90_000);
afterAll(async () => {
  if (svc?.proc.exitCode === null) {
    svc.proc.kill('SIGTERM');
    await svc.exited;
  }
  await dbh?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('a large upload with a wrong key gets its 401, every time', async () => {
  // Before, the server destroyed the socket at the answer with the client's bytes unread: a reset,
  // and fetch reported ECONNRESET for most of these instead of the 401.
  const got: (number | string)[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await fetch(`${svc.base}/v1/uploads`, {
      method: 'POST',
      headers: { authorization: 'Bearer rg_live_unknown', 'content-type': 'image/png' },
      body: new Uint8Array(16 * 1024 * 1024),
    }).catch((e: Error & { cause?: { code?: string } }) => `${e.message} ${e.cause?.code ?? ''}`);
    if (typeof r === 'string') got.push(r);
    else {
      got.push(r.status);
      await r.arrayBuffer();
    }
  }
  expect(got).toEqual(Array(6).fill(401));
});

it('a small upload with a wrong key gets its 401 on every one of many requests', async () => {
  // 120 KB fits in the socket's buffers: fetch has sent the whole body when the 401 comes. When the
  // server closed such a connection without saying `Connection: close`, fetch kept it, and its next
  // request went into the close (UND_ERR_SOCKET, about once in 200 here). Now the rest of a body of
  // at most 1 MiB is read and dropped, and the connection kept for the next request (drainsRest).
  const got = new Map<number | string, number>();
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${svc.base}/v1/uploads`, {
      method: 'POST',
      headers: { authorization: 'Bearer rg_live_unknown', 'content-type': 'image/png' },
      body: new Uint8Array(120 * 1024),
    }).catch((e: Error & { cause?: { code?: string } }) => `${e.message} ${e.cause?.code ?? ''}`);
    const k = typeof r === 'string' ? r : r.status;
    if (typeof r !== 'string') {
      expect(r.headers.get('connection')).toBe('keep-alive');
      await r.arrayBuffer();
    }
    got.set(k, (got.get(k) ?? 0) + 1);
  }
  expect([...got]).toEqual([[401, 200]]);
});

it('a small upload with a wrong key on a connection the client closes gets its 401 every time', async () => {
  // `Connection: close` from the client (or HTTP/1.0): the server closes after the answer, so the rest
  // of the body is not read; the socket lingers instead of resetting the answer away.
  const { port } = new URL(svc.base);
  const got = new Map<number | string, number>();
  for (let i = 0; i < 100; i++) {
    const k = await new Promise<number | string>((resolve) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/uploads',
          agent: false,
          headers: {
            authorization: 'Bearer rg_live_unknown',
            'content-type': 'image/png',
            connection: 'close',
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
          res.on('error', (e: Error & { code?: string }) => resolve(e.code ?? e.message));
        },
      );
      req.on('error', (e: Error & { code?: string }) => resolve(e.code ?? e.message));
      req.end(Buffer.alloc(120 * 1024));
    });
    got.set(k, (got.get(k) ?? 0) + 1);
  }
  expect([...got]).toEqual([[401, 100]]);
});
