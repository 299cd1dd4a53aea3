// An account past its upload quota is refused before the body of its next upload is read
// (src/admission/upload-quota.ts, docs/account-limits.md): the process remembers the refusal for a
// moment, POST /v1/uploads answers the same 409 from a hook before the body. The rest of a body of at
// most 1 MiB is then read and dropped, and the connection kept for the client's next request; a larger
// one's connection closes once the client has the answer (src/http/lingering-close.ts). The service
// runs as its own process, as in
// production (see early-answer.test.ts: in one process with the client, the race that loses an early
// answer does not happen).
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/db.ts';
import { ADMIN, client } from '../helpers/service.ts';
import { spawnService, type Spawned } from '../helpers/spawned.ts';
import { DRAIN_MAX_BYTES } from '../../src/http/lingering-close.ts';

const QUOTA = 2;
let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: Spawned;
let noise: Buffer;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-upq-'));

beforeAll(async () => {
  // A noise image does not compress: about 120 KB, as the soak's attacker sends.
  noise = await sharp(crypto.randomBytes(200 * 200 * 3), {
    raw: { width: 200, height: 200, channels: 3 },
  })
    .png()
    .toBuffer();
  dbh = await freshDatabase();
  svc = await spawnService({
    DATABASE_URL: dbh.url,
    RENDERGATE_DATA_DIR: path.join(dir, 'data'),
    RENDERGATE_ADMIN_TOKEN: ADMIN,
    RENDERGATE_WORKER_CONCURRENCY: '0',
    RENDERGATE_UPLOAD_QUOTA_COUNT: String(QUOTA),
    // every refusal at once: this floods refusals to test their connections, not their pace
    // (refusal-pace.test.ts)
    RENDERGATE_REFUSAL_PACE_MS: '0',
    // a request whose body never comes is dropped this soon (see the raw-socket test)
    RENDERGATE_REQUEST_TIMEOUT_SECONDS: '5',
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

const upload = (key: string) =>
  fetch(`${svc.base}/v1/uploads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' },
    body: new Uint8Array(noise),
  }).then(
    async (r) => ({ status: r.status, json: (await r.json()) as Record<string, any> }),
    (e: Error & { cause?: { code?: string } }) => ({
      status: `${e.message} ${e.cause?.code ?? ''}`,
      json: {} as Record<string, any>,
    }),
  );

/**
 * POST /v1/uploads declaring the whole image's length but sending only its first KiB, over a socket of
 * its own: what the server answers (all it sends until it closes), and the bytes it was sent.
 */
function partialUpload(key: string): Promise<{ answer: string; sent: number }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(svc.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const head = Buffer.from(
      `POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1:${svc.port}\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: image/png\r\nContent-Length: ${noise.length}\r\n\r\n`,
    );
    const first = noise.subarray(0, 1024);
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', reject);
    s.on('close', () => resolve({ answer: Buffer.concat(chunks).toString(), sent: first.length }));
    s.write(Buffer.concat([head, first]));
  });
}

it('answers the 409 before the body, to a real fetch every time, and keeps the quota exact', async () => {
  const c = client(svc.base);
  const a = await c.account(0);
  const made = await Promise.all(Array.from({ length: QUOTA }, () => upload(a.key)));
  expect(made.map((r) => r.status)).toEqual(Array(QUOTA).fill(201));

  // Back to back, two loops at once, as the soak's attacker: every one is the 409, with the body of
  // the database's refusal, and none is a "fetch failed" (UND_ERR_SOCKET): the connection a client
  // keeps after sending all of its 120 KB body is kept by the server too.
  const refused = (
    await Promise.all(
      [0, 1].map(async () => {
        const got = [];
        for (let i = 0; i < 100; i++) got.push(await upload(a.key));
        return got;
      }),
    )
  ).flat();
  expect(refused.map((r) => r.status)).toEqual(Array(200).fill(409));
  for (const r of refused) {
    expect(r.json.code).toBe('UPLOAD_QUOTA_EXCEEDED');
    expect(r.json.details).toEqual([
      { usedBytes: QUOTA * noise.length, quotaBytes: 1024 ** 3, count: QUOTA, quotaCount: QUOTA },
    ]);
  }

  // The proof that the body is not read: a request that sends 1 KiB of its declared 120 KB gets the
  // 409 (read before the body can have been, since it never comes); the connection closes at the
  // request's deadline (5 s here), since the rest it waits for never comes either. The
  // refusal is remembered for a second after the database's: were it forgotten between the two
  // requests (a machine stalled that long), the server waits for the body until the request timeout,
  // then drops the connection (or answers 408); then the pair is tried again.
  let early: { answer: string; sent: number } | null = null;
  for (let i = 0; i < 5 && !early; i++) {
    expect((await upload(a.key)).status).toBe(409);
    const got = await partialUpload(a.key);
    if (got.answer.startsWith('HTTP/1.1 409')) early = got;
    else expect(got.answer).toMatch(/^(HTTP\/1\.1 408|$)/);
  }
  expect(early).not.toBeNull();
  expect(early!.sent).toBeLessThan(noise.length / 100);
  expect(early!.answer).toContain('"code":"UPLOAD_QUOTA_EXCEEDED"');

  // The quota stayed exact.
  const { rows } = await dbh.db.query(
    'SELECT count(*)::int AS n FROM uploads WHERE account_id = $1 AND deleted_at IS NULL',
    [a.accountId],
  );
  expect(rows[0].n).toBe(QUOTA);

  // A delete through this process forgets the refusal at once: the next upload is stored.
  const del = await c.call('DELETE', `/v1/uploads/${made[0].json.id}`, { key: a.key });
  expect(del.status).toBe(200);
  expect((await upload(a.key)).status).toBe(201);
  expect((await upload(a.key)).status).toBe(409);

  // Another account is not refused by this one's memory.
  const b = await c.account(0);
  expect((await upload(b.key)).status).toBe(201);
});

/**
 * Writes `chunks` to a connection of its own; resolves with what the server sent once `enough` says
 * it is all in (`open`: the server had not closed), or when the server closes (`open` false).
 */
function exchange(
  chunks: Array<string | Buffer>,
  enough: (got: string) => boolean,
): Promise<{ got: string; open: boolean }> {
  return new Promise((resolve, reject) => {
    let got = '';
    const s = net.connect(svc.port, '127.0.0.1', () => {
      for (const c of chunks) s.write(c);
    });
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (enough(got)) {
        s.destroy();
        resolve({ got, open: true });
      }
    });
    s.on('error', reject);
    s.on('close', () => resolve({ got, open: false }));
  });
}
const statusLines = (got: string) => got.match(/HTTP\/1\.1 \d{3}/g) ?? [];

it('keeps the connection of a refused small upload, and closes a large one’s', async () => {
  const a = await client(svc.base).account(0);
  for (let i = 0; i < QUOTA; i++) expect((await upload(a.key)).status).toBe(201);
  const head = (length: number) =>
    `POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${a.key}\r\n` +
    `Content-Type: image/png\r\nContent-Length: ${length}\r\n\r\n`;
  const list = `GET /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${a.key}\r\n\r\n`;

  // Two refused uploads with their whole bodies, then a listing, on one connection: the rest of
  // each body is read and dropped, and each next request answered.
  expect((await upload(a.key)).status).toBe(409);
  const kept = await exchange(
    [head(noise.length), noise, head(noise.length), noise, list],
    (g) => statusLines(g).length === 3 && g.endsWith('}'),
  );
  expect(kept.open).toBe(true);
  expect(statusLines(kept.got)).toEqual(['HTTP/1.1 409', 'HTTP/1.1 409', 'HTTP/1.1 200']);
  expect(kept.got).not.toMatch(/connection: close/i);

  // Declared past DRAIN_MAX_BYTES: the 409 says `Connection: close`, and the server closes once the
  // client has it, 1 KiB of the body sent (refused before it, or asked of the database after the
  // whole of it: the test sends no more, so only the first can answer).
  let closed: string | null = null;
  for (let i = 0; i < 5 && closed === null; i++) {
    expect((await upload(a.key)).status).toBe(409);
    const large = await exchange([head(DRAIN_MAX_BYTES + 1), noise.subarray(0, 1024)], () => false);
    expect(large.open).toBe(false);
    if (large.got.startsWith('HTTP/1.1 409')) closed = large.got;
  }
  expect(closed).toMatch(/connection: close/i);
}, 60_000);
