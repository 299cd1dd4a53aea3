// Uploads (docs/api.md "Uploads") on a server that refuses private addresses, as production runs: an
// upload `url` used as an image input is read from storage by the worker, never fetched, so it renders
// although the address is on loopback. Another account's, an unknown, a deleted or an expired upload is
// refused at quote and create naming the field; one gone by the time the render runs fails it, refunded.
import crypto from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import sharp from 'sharp';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { janitor } from '../../helpers/janitor.ts';

const LIMIT = 300_000;
let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let api: TestService;
let worker: TestService | null = null;
let c: ReturnType<typeof client>;
let png: Buffer;

const env = (extra: Record<string, string> = {}) => ({
  RENDERGATE_ALLOW_PRIVATE_URLS: '0',
  RENDERGATE_UPLOAD_LIMIT_BYTES: String(LIMIT),
  RENDERGATE_WORKER_CONCURRENCY: '2',
  ...extra,
});

beforeAll(async () => {
  dbh = await freshDatabase();
  api = await startTestService(dbh.url, { role: 'api', env: env() });
  c = client(api.base);
  png = await sharp({
    create: { width: 320, height: 200, channels: 3, background: { r: 200, g: 80, b: 30 } },
  })
    .png()
    .toBuffer();
});
afterAll(async () => {
  await worker?.stop();
  await api?.stop();
  await dbh?.drop();
});

/** A worker process on the same database and files, answering for the API's public URL. */
const startWorker = async () => {
  worker = await startTestService(dbh.url, {
    role: 'worker',
    dataDir: api.dataDir,
    env: env({ RENDERGATE_PUBLIC_URL: api.base }),
  });
};

const upload = (key: string, body: Buffer, type = 'image/png') =>
  fetch(`${api.base}/v1/uploads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': type },
    body: new Uint8Array(body),
  }).then(async (r) => ({ status: r.status, json: await r.json(), headers: r.headers }));
const create = (key: string, image: string) =>
  c.call('POST', '/v1/generations', {
    key,
    body: {
      modelId: 'rendergate/image-to-video',
      inputs: { prompt: 'slow push in', image, duration: 5 },
    },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });

it('stores a decoded image, serves it back to its account only, and deletes it', async () => {
  const a = await c.account(0);
  const b = await c.account(0);
  const r = await upload(a.key, png);
  expect(r.status).toBe(201);
  expect(r.json).toMatchObject({
    contentType: 'image/png',
    sizeBytes: png.length,
    width: 320,
    height: 200,
  });
  expect(r.json.id).toMatch(/^upl_[0-9a-f]{32}$/);
  expect(r.json.url).toBe(`${api.base}/v1/uploads/${r.json.id}`);
  expect(Date.parse(r.json.expiresAt) - Date.parse(r.json.createdAt)).toBe(7 * 86400_000);
  const back = await fetch(r.json.url, { headers: { authorization: `Bearer ${a.key}` } });
  expect([back.status, back.headers.get('content-type')]).toEqual([200, 'image/png']);
  expect(Buffer.from(await back.arrayBuffer()).equals(png)).toBe(true);
  expect((await c.call('GET', `/v1/uploads/${r.json.id}`, { key: b.key })).json.code).toBe(
    'UPLOAD_NOT_FOUND',
  );
  expect((await c.call('DELETE', `/v1/uploads/${r.json.id}`, { key: b.key })).status).toBe(404);
  expect((await c.call('DELETE', `/v1/uploads/${r.json.id}`, { key: a.key })).json).toEqual({
    id: r.json.id,
    deleted: true,
  });
  expect((await c.call('GET', `/v1/uploads/${r.json.id}`, { key: a.key })).status).toBe(404);
  expect((await c.call('GET', '/v1/uploads/upl_nope', { key: a.key })).json.code).toBe(
    'UPLOAD_NOT_FOUND',
  );
});

it('refuses what is not an image of its declared type, a type it does not take, and a body over its own limit', async () => {
  const a = await c.account(0);
  const jpeg = await sharp(png).jpeg().toBuffer();
  const webp = await sharp(png).webp().toBuffer();
  const interlaced = await sharp(png).png({ progressive: true }).toBuffer();
  for (const [image, type] of [
    [jpeg, 'image/jpeg'],
    [webp, 'image/webp'],
    [interlaced, 'image/png'],
  ] as const)
    expect((await upload(a.key, image, type)).status).toBe(201);
  const bad = [
    [await upload(a.key, jpeg, 'image/png'), 400, 'INVALID_INPUT'], // a JPEG declared as PNG
    [await upload(a.key, png.subarray(0, png.length - 40), 'image/png'), 400, 'INVALID_INPUT'], // truncated
    // cut in their last rows: decoding to the last pixel reads every row, interlaced PNG included
    [await upload(a.key, interlaced.subarray(0, interlaced.length - 40)), 400, 'INVALID_INPUT'],
    [await upload(a.key, jpeg.subarray(0, jpeg.length - 4), 'image/jpeg'), 400, 'INVALID_INPUT'],
    [await upload(a.key, webp.subarray(0, webp.length - 4), 'image/webp'), 400, 'INVALID_INPUT'],
    [await upload(a.key, Buffer.from('hello'), 'image/webp'), 400, 'INVALID_INPUT'],
    [await upload(a.key, png, 'image/gif'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
    [await upload(a.key, png, 'application/octet-stream'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
    [await upload(a.key, Buffer.alloc(LIMIT + 1), 'image/png'), 413, 'PAYLOAD_TOO_LARGE'],
  ] as const;
  for (const [r, status, code] of bad) expect([r.status, r.json.code]).toEqual([status, code]);
  expect(bad[0][0].json.details).toEqual([
    { field: 'body', message: expect.stringContaining('image/png') },
  ]);
  expect(bad[1][0].json.details).toEqual([
    { field: 'body', message: 'does not decode as image/png (truncated or corrupt)' },
  ]);
  // 49 megapixels of black compress to 143 KB: refused from its header, with its size
  const huge = await sharp({
    create: { width: 7000, height: 7000, channels: 3, background: '#000' },
  })
    .png({ compressionLevel: 9 })
    .toBuffer();
  const tooBig = await upload(a.key, huge, 'image/png');
  expect([tooBig.status, tooBig.json.details]).toEqual([
    400,
    [{ field: 'body', message: 'is 7000×7000 pixels, more than the limit of 40000000' }],
  ]);
  expect((await upload(a.key, jpeg, 'image/jpeg')).status).toBe(201);
  // the JSON body limit (1 MiB by default) is unchanged elsewhere, and a JSON route takes no image
  const onJson = await fetch(`${api.base}/v1/quote`, {
    method: 'POST',
    headers: { authorization: `Bearer ${a.key}`, 'content-type': 'image/png' },
    body: new Uint8Array(png),
  });
  expect(onJson.status).toBe(415);
});

it("refuses at quote and create another account's, an unknown, a deleted and an expired upload, naming the field", async () => {
  const a = await c.account(100_000);
  const b = await c.account(0);
  const theirs = (await upload(b.key, png)).json.url;
  const deleted = (await upload(a.key, png)).json;
  await c.call('DELETE', `/v1/uploads/${deleted.id}`, { key: a.key });
  const expired = (await upload(a.key, png)).json;
  await dbh.db.query(`UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = $1`, [
    expired.id,
  ]);
  for (const image of [
    theirs,
    `${api.base}/v1/uploads/upl_${'0'.repeat(32)}`,
    `${api.base}/v1/uploads/junk`,
    deleted.url,
    expired.url,
  ]) {
    const q = await c.call('POST', '/v1/quote', {
      key: a.key,
      body: { modelId: 'rendergate/image-to-video', inputs: { prompt: 'x', image } },
    });
    expect([q.status, q.json.code, q.json.details?.[0]?.field]).toEqual([
      400,
      'INVALID_INPUT',
      'inputs.image',
    ]);
    const g = await create(a.key, image);
    expect([g.status, g.json.details?.[0]?.field], g.text).toEqual([400, 'inputs.image']);
  }
  const both = await c.call('POST', '/v1/quote', {
    key: a.key,
    body: {
      modelId: 'rendergate/start-end-to-video',
      inputs: { prompt: 'x', image: theirs, last_image: expired.url },
    },
  });
  expect(both.json.details.map((d: any) => d.field).sort()).toEqual([
    'inputs.image',
    'inputs.last_image',
  ]);
  expect((await c.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(100_000);
});

it('a render whose upload is gone by the time it runs fails and is refunded', async () => {
  const a = await c.account(100_000);
  const u = (await upload(a.key, png)).json;
  const g = await create(a.key, u.url);
  expect(g.status, g.text).toBe(202);
  // no worker runs yet: the upload expires while the render waits
  await dbh.db.query(`UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = $1`, [
    u.id,
  ]);
  await startWorker();
  const done = await c.waitFinal(a.key, g.json.id);
  expect(done).toMatchObject({
    status: 'failed',
    error: { code: 'INPUT_UPLOAD_GONE' },
    refundedCents: g.json.costCents,
  });
  expect((await c.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(100_000);
});

it('an upload url renders on a server that refuses private addresses (read from storage, never fetched); a loopback url is refused', async () => {
  const a = await c.account(100_000);
  const u = (await upload(a.key, png)).json;
  expect(new URL(u.url).hostname).toBe('127.0.0.1');
  const [ok, direct, named] = await Promise.all([
    create(a.key, u.url),
    create(a.key, `${api.base}/healthz`),
    create(a.key, `${api.base.replace('127.0.0.1', 'localhost')}/healthz`),
  ]);
  // The service's own address, literally: refused at create; by a host name: at the fetch.
  expect([direct.status, direct.json.details[0].field]).toEqual([400, 'inputs.image']);
  const done = await c.waitFinal(a.key, ok.json.id);
  expect(done).toMatchObject({ status: 'succeeded', contentType: 'video/mp4', progress: 1 });
  const file = await fetch(done.contentUrl, { headers: { authorization: `Bearer ${a.key}` } });
  expect(
    Buffer.from(await file.arrayBuffer())
      .subarray(4, 8)
      .toString(),
  ).toBe('ftyp');
  expect(await c.waitFinal(a.key, named.json.id)).toMatchObject({
    status: 'failed',
    error: { code: 'INPUT_URL_REFUSED' },
  });
  await checkInvariants(dbh.db);
});

it('the janitor removes expired and deleted uploads, files and rows, once', async () => {
  const a = await c.account(0);
  const u = (await upload(a.key, png)).json;
  await dbh.db.query(`UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = $1`, [
    u.id,
  ]);
  const storage = api.running.infra.storage;
  const { rows } = await dbh.db.query('SELECT storage_key FROM uploads WHERE id = $1', [u.id]);
  const janitors = [0, 1].map(() => janitor(dbh.db, storage));
  const removed = await Promise.all(janitors.map((j) => j.removeUploads()));
  expect(removed.reduce((x, y) => x + y, 0)).toBeGreaterThanOrEqual(1);
  expect((await dbh.db.query('SELECT 1 FROM uploads WHERE id = $1', [u.id])).rowCount).toBe(0);
  await expect(storage.read(rows[0].storage_key).then((s) => s.toArray())).rejects.toThrow();
  await checkInvariants(dbh.db);
});
