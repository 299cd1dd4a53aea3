// Refusals that keep coming are answered late (src/admission/refusal-pace.ts, docs/account-limits.md):
// a key past its rate limit, an account past its upload quota and an address past the studio doors'
// budget, each flooded from two loops as the soak's attacker floods them, get their first refusals at
// once and then about one a second per loop, where unpaced they would get hundreds; every answer is
// still the refusal it was, and another account, key or address is not held back.
import crypto from 'node:crypto';
import sharp from 'sharp';
import { beforeAll, expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { fetchFrom } from '../helpers/fetch-from.ts';
import { awayFromMinuteEdge } from '../helpers/minute.ts';
import { StudioSession } from '../studio/http-session.ts';
import { expectPaced as paced, flood as floodOf, read } from '../helpers/refusal-flood.ts';

const BURST = 5;
const FLOOD_MS = 4_000;
const f = serviceFixture({
  env: {
    RENDERGATE_WORKER_CONCURRENCY: '0',
    RENDERGATE_UPLOAD_QUOTA_COUNT: '1',
    RENDERGATE_STUDIO_DOOR_REQUESTS_PER_MINUTE: '2',
    RENDERGATE_REFUSAL_PACE_BURST: String(BURST),
    // a studio session's requests a minute (keys below are given their own limits)
    RENDERGATE_RATE_LIMIT_PER_MINUTE: '3',
  },
});
const ROOMY = { rateLimitPerMinute: 100_000 };
const flood = (one: () => Promise<Response>) => floodOf(() => read(one()), FLOOD_MS);
const expectPaced = (refused: Awaited<ReturnType<typeof flood>>) => paced(refused, BURST, FLOOD_MS);

let noise: Buffer;
beforeAll(async () => {
  noise = await sharp(crypto.randomBytes(64 * 64 * 3), {
    raw: { width: 64, height: 64, channels: 3 },
  })
    .png()
    .toBuffer();
});

it("holds a flooding key's 429s, not another key's answers", async () => {
  await awayFromMinuteEdge(FLOOD_MS + 10_000);
  const flooder = await f.api.account(0, { rateLimitPerMinute: 1 });
  const other = await f.api.account(0, ROOMY);
  expect((await f.api.call('GET', '/v1/me', { key: flooder.key })).status).toBe(200);
  const meOf = (key: string) =>
    fetch(`${f.svc.base}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  const [got, others] = await Promise.all([
    flood(() => meOf(flooder.key)),
    (async () => {
      const seen: number[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await meOf(other.key);
        await r.arrayBuffer();
        seen.push(r.status);
        await new Promise((res) => setTimeout(res, 100));
      }
      return seen;
    })(),
  ]);
  expect(new Set(got.map((g) => `${g.status} ${g.code}`))).toEqual(new Set(['429 RATE_LIMITED']));
  for (const g of got) expect(Number(g.retryAfter)).toBeGreaterThanOrEqual(1);
  expectPaced(got);
  expect(others).toEqual(Array(20).fill(200));
});

it("holds a flooding account's upload 409s", async () => {
  const a = await f.api.account(0, ROOMY);
  const upload = () =>
    fetch(`${f.svc.base}/v1/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'image/png' },
      body: new Uint8Array(noise),
    });
  expect((await upload()).status).toBe(201);
  const got = await flood(upload);
  expect(new Set(got.map((g) => `${g.status} ${g.code}`))).toEqual(
    new Set(['409 UPLOAD_QUOTA_EXCEEDED']),
  );
  expectPaced(got);
});

it("holds a flooding address's door 429s, not another address's pages", async () => {
  const got = await flood(() => fetchFrom('127.0.0.2', `${f.svc.base}/signin`));
  // the budget's two pages, then its constant 429s
  expect(got.filter((g) => g.status === 200)).toHaveLength(2);
  const refused = got.filter((g) => g.status === 429);
  expect(refused.length).toBe(got.length - 2);
  for (const g of refused) expect(Number(g.retryAfter)).toBeGreaterThanOrEqual(1);
  expectPaced(refused);
  const page = await fetchFrom('127.0.0.3', `${f.svc.base}/signin`);
  expect(page.status).toBe(200);
});

it("holds a flooding studio session's 429s", async () => {
  await awayFromMinuteEdge(FLOOD_MS + 10_000);
  // signed up from an address of its own: the doors' budget of 127.0.0.2 is spent above
  const person = new StudioSession(f.svc.base, f.svc.base, '127.0.0.4');
  await person.signUp();
  const home = () =>
    fetchFrom('127.0.0.4', `${f.svc.base}/`, { headers: { cookie: person.cookieHeader() } });
  const got = await flood(home);
  const refused = got.filter((g) => g.status === 429);
  // at most its minute's three pages (sign-up's redirect may have taken one), then the 429 page
  expect(got.length - refused.length).toBeLessThanOrEqual(3);
  for (const g of refused) expect(Number(g.retryAfter)).toBeGreaterThanOrEqual(1);
  expectPaced(refused);
});
