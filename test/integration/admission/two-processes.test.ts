// Two API processes on one database give an account one bound, not two
// (src/admission/shared-pace.ts, docs/limits.md "Paces across processes"): its upload turns and
// its budget of request bodies are one schedule in PostgreSQL, whichever process a request
// reaches. Each process alone would let an account through its whole burst: two would have let
// twice the bound through.
import { afterAll, beforeAll, expect, it } from 'vitest';
import sharp from 'sharp';
import { UPLOAD_BURST } from '../../../src/admission/upload-turns.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';

const LIMIT = 256 * 1024;
const env = {
  // a turn a second after the burst of 20: the burst is nearly all an account gets during the test
  RENDERGATE_UPLOADS_PER_SECOND: '1',
  // a burst of four bodies at the limit (1 MiB), then 16 KiB a second: one more goes owed
  RENDERGATE_BODY_LIMIT_BYTES: String(LIMIT),
  RENDERGATE_BODY_BYTES_PER_SECOND: String(16 * 1024),
};
let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let procs: TestService[] = [];
let png: Buffer;

beforeAll(async () => {
  dbh = await freshDatabase();
  procs = [
    await startTestService(dbh.url, { role: 'api', env }),
    await startTestService(dbh.url, { role: 'api', env }),
  ];
  png = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#08f' } })
    .png()
    .toBuffer();
});
afterAll(async () => {
  for (const p of procs) await p.stop();
  await dbh?.drop();
});

const upload = (base: string, key: string) =>
  fetch(`${base}/v1/uploads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' },
    body: new Uint8Array(png),
  }).then((r) => r.status);

/** A quote whose body is `bytes` long (padded with spaces, which JSON allows). */
const quote = (base: string, key: string, bytes: number) => {
  const json = JSON.stringify({ modelId: 'rendergate/shot-list', inputs: { text: 'A gull.' } });
  return fetch(`${base}/v1/quote`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: json + ' '.repeat(bytes - json.length),
  }).then(async (r) => ({ status: r.status, code: ((await r.json()) as { code?: string }).code }));
};

it("takes an account's upload burst once across both processes", async () => {
  const { key } = await client(procs[0].base).account(0);
  const statuses = await Promise.all(
    Array.from({ length: 2 * UPLOAD_BURST }, (_, i) => upload(procs[i % 2].base, key)),
  );
  const made = statuses.filter((s) => s === 201).length;
  // the burst, and the turns at most 2 s away (a turn a second), and a turn or two more for the
  // time the test takes; each process alone would have made all 40
  expect(made).toBeLessThanOrEqual(UPLOAD_BURST + 4);
  expect(made).toBeGreaterThanOrEqual(UPLOAD_BURST - 5);
  expect(statuses.filter((s) => s !== 201 && s !== 429)).toEqual([]);
});

it("takes an account's burst of large bodies once across both processes", async () => {
  const { key } = await client(procs[0].base).account(0);
  const got = [];
  for (let i = 0; i < 10; i++) got.push(await quote(procs[i % 2].base, key, LIMIT - 100));
  // four bodies of the burst and a fifth owed, whichever process each reached; each process alone
  // would have let five through
  expect(got.map((r) => r.status)).toEqual([...Array(5).fill(200), ...Array(5).fill(429)]);
  expect(got[5].code).toBe('RATE_LIMITED');
  // small bodies never count
  expect((await quote(procs[1].base, key, 2000)).status).toBe(200);
});
