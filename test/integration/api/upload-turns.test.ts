// An account's uploads are decoded and stored at most RENDERGATE_UPLOADS_PER_SECOND turns a second after
// a burst of 20 (src/admission/upload-turns.ts, docs/account-limits.md), a large image taking the turns
// of its decode: past it they wait their turn, up to 2 s and 4 at once, else 429; another account keeps
// its own burst.
import { beforeAll, expect, it } from 'vitest';
import sharp from 'sharp';
import { UPLOAD_BURST } from '../../../src/admission/upload-turns.ts';
import { serviceFixture } from '../../helpers/fixture.ts';

const PER_SECOND = 5;
const f = serviceFixture({
  env: { RENDERGATE_UPLOADS_PER_SECOND: String(PER_SECOND), RENDERGATE_WORKER_CONCURRENCY: '0' },
});
let png: Buffer;

beforeAll(async () => {
  png = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#08f' } })
    .png()
    .toBuffer();
});

const upload = (key: string, body = png, type = 'image/png') =>
  fetch(`${f.svc.base}/v1/uploads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': type },
    body: new Uint8Array(body),
  }).then(async (r) => ({
    status: r.status,
    retryAfter: r.headers.get('retry-after'),
    json: (await r.json()) as { code?: string },
  }));

it('takes a burst at once, lets four wait their turn, refuses the rest with 429', async () => {
  const a = await f.api.account(0);
  const b = await f.api.account(0);
  expect(UPLOAD_BURST).toBe(20);
  const all = await Promise.all(Array.from({ length: UPLOAD_BURST + 7 }, () => upload(a.key)));
  const made = all.filter((r) => r.status === 201);
  const refused = all.filter((r) => r.status === 429);
  // The burst and four waiting; a turn is 200 ms, so while 27 uploads are read and decoded on a busy
  // machine one more may come due and go too (seen in CI's load), never more than that.
  expect(made.length + refused.length).toBe(UPLOAD_BURST + 7);
  expect(made.length).toBeGreaterThanOrEqual(UPLOAD_BURST + 4);
  expect(made.length).toBeLessThanOrEqual(UPLOAD_BURST + 5);
  for (const r of refused) {
    expect(r.json.code).toBe('RATE_LIMITED');
    expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
  }
  // another account is not behind the first one's queue
  const other = await Promise.all(Array.from({ length: UPLOAD_BURST }, () => upload(b.key)));
  expect(other.map((r) => r.status)).toEqual(Array(UPLOAD_BURST).fill(201));
});

it('stores a steady flood of one account at its rate', async () => {
  const a = await f.api.account(0);
  const until = Date.now() + 3_000;
  const statuses: number[] = [];
  await Promise.all(
    [0, 1].map(async () => {
      while (Date.now() < until) statuses.push((await upload(a.key)).status);
    }),
  );
  const made = statuses.filter((s) => s === 201).length;
  // the burst and three seconds' worth (a turn booked just before the end adds one); never refused:
  // two loops never have more than two waiting, and a turn is never 2 s away
  expect(made).toBeLessThanOrEqual(UPLOAD_BURST + 3 * PER_SECOND + 2);
  expect(made).toBeGreaterThanOrEqual(UPLOAD_BURST + 1);
  expect(statuses.filter((s) => s !== 201)).toEqual([]);
  const listed = await f.api.call('GET', '/v1/uploads?limit=100', { key: a.key });
  expect(listed.json.data).toHaveLength(made);
});

it('makes the uploads after a large image wait for the turns of its decode', async () => {
  const a = await f.api.account(0);
  const b = await f.api.account(0);
  // 16 megapixels of WebP: about 350 ms to decode, 58 turns (upload-turns.ts); at 5 a second, after a
  // burst of 20, it goes at once and the account owes 39 turns, 7.8 s
  const large = await sharp({
    create: { width: 4000, height: 4000, channels: 3, background: '#357' },
  })
    .webp()
    .toBuffer();
  expect((await upload(a.key, large, 'image/webp')).status).toBe(201);
  const next = await upload(a.key);
  expect([next.status, next.json.code]).toEqual([429, 'RATE_LIMITED']);
  // 7.8 s less the time since the large upload booked its turns (its decode and storing)
  expect(Number(next.retryAfter)).toBeGreaterThanOrEqual(7);
  // the same bytes as a 16×16 PNG each would have gone in the burst; another account still has its own
  const other = await Promise.all(Array.from({ length: UPLOAD_BURST }, () => upload(b.key)));
  expect(other.map((r) => r.status)).toEqual(Array(UPLOAD_BURST).fill(201));
});
