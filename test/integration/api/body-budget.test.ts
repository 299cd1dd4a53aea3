// An account's request bodies over 16 KiB count against RENDERGATE_BODY_BYTES_PER_SECOND after a burst
// of four bodies at the limit (src/admission/body-budget.ts, docs/account-limits.md "Request bodies"):
// parsing a MiB of JSON costs up to 13 ms of CPU, so an account at its rate limit could otherwise take
// more than a core. Refused before the body is read; small bodies, uploads' images and other accounts are
// not held back.
import crypto from 'node:crypto';
import sharp from 'sharp';
import { expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';

const LIMIT = 256 * 1024;
// a burst of 1 MiB (four bodies at the limit), then 16 KiB a second: 256 KiB owed is 16 s
const f = serviceFixture({
  env: {
    RENDERGATE_BODY_LIMIT_BYTES: String(LIMIT),
    RENDERGATE_BODY_BYTES_PER_SECOND: String(16 * 1024),
    RENDERGATE_WORKER_CONCURRENCY: '0',
  },
});

/** A quote whose body is `bytes` long (a text input padded with spaces, which JSON allows). */
const quote = (key: string, bytes: number, chunked = false) => {
  const json = JSON.stringify({ modelId: 'rendergate/shot-list', inputs: { text: 'A gull.' } });
  const body = json + ' '.repeat(bytes - json.length);
  return fetch(`${f.svc.base}/v1/quote`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: chunked ? new Blob([body]).stream() : body,
    ...(chunked ? { duplex: 'half' } : {}),
  }).then(async (r) => ({
    status: r.status,
    retryAfter: r.headers.get('retry-after'),
    json: (await r.json()) as { code?: string; message?: string },
  }));
};

it("refuses an account's large bodies past its burst with 429, before reading them; small ones and other accounts go", async () => {
  const a = await f.api.account(0);
  const b = await f.api.account(0);
  const big = LIMIT - 100;
  const got = [];
  for (let i = 0; i < 6; i++) got.push(await quote(a.key, big));
  // four bodies of the burst, a fifth owed, the sixth refused
  expect(got.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
  expect(got[5].json.code).toBe('RATE_LIMITED');
  expect(got[5].json.message).toMatch(/^This account's request bodies come faster than/);
  expect(Number(got[5].retryAfter)).toBeGreaterThanOrEqual(10);
  // small bodies are never counted
  for (let i = 0; i < 5; i++) expect((await quote(a.key, 2000)).status).toBe(200);
  // an upload's image counts in its own turns, not here: 120 KB of noise goes
  const image = await sharp(crypto.randomBytes(200 * 200 * 3), {
    raw: { width: 200, height: 200, channels: 3 },
  })
    .png()
    .toBuffer();
  expect(image.length).toBeGreaterThan(100_000);
  const up = await fetch(`${f.svc.base}/v1/uploads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${a.key}`, 'content-type': 'image/png' },
    body: new Uint8Array(image),
  });
  expect(up.status).toBe(201);
  // another account keeps its own burst
  expect((await quote(b.key, big)).status).toBe(200);
});

it('counts a chunked body, whose length is unknown, as the body limit', async () => {
  const a = await f.api.account(0);
  const got = [];
  for (let i = 0; i < 6; i++) got.push((await quote(a.key, 1000, true)).status);
  expect(got).toEqual([200, 200, 200, 200, 200, 429]);
});
