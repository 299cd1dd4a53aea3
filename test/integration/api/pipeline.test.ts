// The render pipeline's own rules: retries with backoff, permanent failures, the deadline reconciler,
// crash-looping jobs, idempotency pruning, content validators and ranges, list filters.
import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { checkInvariants } from '../../helpers/invariants.ts';
import { serviceFixture } from '../../helpers/fixture.ts';
import { waitFor } from '../../helpers/wait.ts';
import { janitor } from '../../helpers/janitor.ts';

const f = serviceFixture();

const video = (key: string, image: string, idem = crypto.randomUUID()) =>
  f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId: 'rendergate/image-to-video', inputs: { prompt: 'a slow push-in', image } },
    headers: { 'idempotency-key': idem },
  });
const sweep = () => janitor(f.dbh.db, f.svc.running.infra.storage).sweep();

it('a retryable failure is retried with backoff until attempts run out, then failed and refunded', async () => {
  const a = await f.api.account(1_000);
  const t0 = Date.now();
  const r = await video(a.key, f.img.url('/flaky.png'));
  const g = await f.api.waitFinal(a.key, r.json.id);
  expect(g.status).toBe('failed');
  expect(g.refundedCents).toBe(g.costCents);
  const { rows } = await f.dbh.db.query('SELECT attempts FROM generations WHERE id = $1', [g.id]);
  expect(rows[0].attempts).toBe(3);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(2_000 + 4_000); // backoff of 2 s then 4 s between the attempts
  expect(f.img.hits['/flaky.png']).toBeGreaterThanOrEqual(3);
});

it('a permanent failure fails at once, on the first attempt', async () => {
  const a = await f.api.account(1_000);
  const g = await f.api.waitFinal(
    a.key,
    (await video(a.key, f.img.url('/nothing-here.png'))).json.id,
  );
  expect(g.status).toBe('failed');
  const { rows } = await f.dbh.db.query('SELECT attempts FROM generations WHERE id = $1', [g.id]);
  expect(rows[0].attempts).toBe(1);
  await checkInvariants(f.dbh.db);
});

it('the reconciler fails and refunds a render stuck past its deadline', async () => {
  const a = await f.api.account(1_000);
  const held = `/held/${crypto.randomUUID()}.png`;
  const r = await video(a.key, f.img.url(held));
  await f.dbh.db.query(
    `UPDATE generations SET deadline_at = now() - interval '1 second' WHERE id = $1`,
    [r.json.id],
  );
  await sweep();
  const g = (await f.api.call('GET', `/v1/generations/${r.json.id}`, { key: a.key })).json;
  expect([g.status, g.error.code, g.refundedCents]).toEqual([
    'failed',
    'RENDER_DEADLINE_EXCEEDED',
    g.costCents,
  ]);
  f.img.release(held);
  // the worker's late result, once its attempt has ended, must not resurrect it
  await waitFor('the worker to end its attempt', () => f.svc.running.worker!.attemptsRunning === 0);
  expect(
    (await f.api.call('GET', `/v1/generations/${r.json.id}`, { key: a.key })).json.status,
  ).toBe('failed');
  expect((await f.api.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(1_000);
  await checkInvariants(f.dbh.db);
});

it('a job that keeps killing its worker is given up after its attempts, and refunded', async () => {
  const a = await f.api.account(1_000);
  const held = `/held/${crypto.randomUUID()}.png`;
  const r = await video(a.key, f.img.url(held));
  // as if three workers had claimed it and died: attempts used up, lease lapsed
  await f.dbh.db.query(
    `UPDATE generations SET attempts = 3, lease_owner = 'dead', lease_until = now() - interval '1 second' WHERE id = $1`,
    [r.json.id],
  );
  f.img.release(held);
  const g = await f.api.waitFinal(a.key, r.json.id);
  expect([g.status, g.error.code]).toEqual(['failed', 'RENDER_ABANDONED']);
  await checkInvariants(f.dbh.db);
});

it('idempotency records are kept 24 h, then pruned', async () => {
  const a = await f.api.account(1_000);
  const idem = crypto.randomUUID();
  const first = await f.api.call('POST', '/v1/generations', {
    key: a.key,
    body: { modelId: 'rendergate/shot-list', inputs: { text: 'One. Two.' } },
    headers: { 'idempotency-key': idem },
  });
  await f.dbh.db.query(
    `UPDATE idempotency_keys SET created_at = now() - interval '23 hours' WHERE key = $1`,
    [idem],
  );
  await sweep();
  const replay = await f.api.call('POST', '/v1/generations', {
    key: a.key,
    body: { modelId: 'rendergate/shot-list', inputs: { text: 'One. Two.' } },
    headers: { 'idempotency-key': idem },
  });
  expect([replay.json.id, replay.headers.get('idempotent-replayed')]).toEqual([
    first.json.id,
    'true',
  ]);
  await f.dbh.db.query(
    `UPDATE idempotency_keys SET created_at = now() - interval '26 hours' WHERE key = $1`,
    [idem],
  );
  await sweep();
  const { rows } = await f.dbh.db.query(
    'SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1',
    [idem],
  );
  expect(rows[0].n).toBe(0);
});

it('content: ETag and If-None-Match, single ranges, suffix ranges, and ranges it cannot satisfy', async () => {
  const a = await f.api.account(1_000);
  const g = await f.api.waitFinal(a.key, (await video(a.key, f.img.url('/a.png'))).json.id);
  expect(g.status).toBe('succeeded');
  const get = (headers: Record<string, string> = {}) =>
    fetch(g.contentUrl, { headers: { authorization: `Bearer ${a.key}`, ...headers } });
  const full = await get();
  const bytes = Buffer.from(await full.arrayBuffer());
  const etag = full.headers.get('etag')!;
  expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
  expect(etag.slice(1, -1)).toBe(crypto.createHash('sha256').update(bytes).digest('base64url'));
  expect((await get({ 'if-none-match': etag })).status).toBe(304);
  expect((await get({ 'if-none-match': '"other"' })).status).toBe(200);
  // RFC 9110 13.1.2: If-None-Match compares weakly.
  expect((await get({ 'if-none-match': `"other", W/${etag}` })).status).toBe(304);
  expect((await get({ 'if-none-match': 'W/"other"' })).status).toBe(200);
  const mid = await get({ range: 'bytes=100-199' });
  expect([mid.status, mid.headers.get('content-range'), mid.headers.get('content-length')]).toEqual(
    [206, `bytes 100-199/${bytes.length}`, '100'],
  );
  expect(Buffer.from(await mid.arrayBuffer())).toEqual(bytes.subarray(100, 200));
  const tail = await get({ range: 'bytes=-10' });
  expect(Buffer.from(await tail.arrayBuffer())).toEqual(bytes.subarray(bytes.length - 10));
  const open = await get({ range: `bytes=${bytes.length - 5}-` });
  expect(Buffer.from(await open.arrayBuffer())).toEqual(bytes.subarray(bytes.length - 5));
  const past = await get({ range: `bytes=${bytes.length}-` });
  expect([past.status, past.headers.get('content-range'), (await past.json()).code]).toEqual([
    416,
    `bytes */${bytes.length}`,
    'RANGE_NOT_SATISFIABLE',
  ]);
  for (const range of ['bytes=5-1', 'bytes=0-1,5-6', 'items=0-1', 'bytes=x-y']) {
    const r = await get({ range });
    expect([range, r.status]).toEqual([range, 200]);
    expect(Number(r.headers.get('content-length'))).toBe(bytes.length);
    await r.arrayBuffer();
  }
  const stale = await get({ range: 'bytes=0-9', 'if-range': '"old"' });
  expect(stale.status).toBe(200);
  await stale.arrayBuffer();
});

it('lists filter by status and model, validate their parameters, and hide other accounts', async () => {
  const a = await f.api.account(10_000);
  const ok = await f.api.waitFinal(a.key, (await video(a.key, f.img.url('/a.png'))).json.id);
  const bad = await f.api.waitFinal(a.key, (await video(a.key, f.img.url('/missing.png'))).json.id);
  const ids = async (q: string) =>
    (await f.api.call('GET', `/v1/generations?${q}`, { key: a.key })).json.data.map(
      (g: { id: string }) => g.id,
    );
  expect(await ids('')).toEqual([bad.id, ok.id]);
  expect(await ids('status=succeeded')).toEqual([ok.id]);
  expect(await ids('status=failed&modelId=rendergate%2Fimage-to-video')).toEqual([bad.id]);
  expect(await ids('modelId=rendergate%2Fshot-list')).toEqual([]);
  for (const [q, field] of [
    ['status=done', 'status'],
    ['modelId=nobody%2Fnothing', 'modelId'],
    ['limit=0', 'limit'],
    ['limit=abc', 'limit'],
    ['cursor=abc', 'cursor'],
    ['limit=1&limit=2', 'limit'],
  ]) {
    const r = await f.api.call('GET', `/v1/generations?${q}`, { key: a.key });
    expect([q, r.status, r.json.details?.[0]?.field]).toEqual([q, 400, field]);
  }
});

it('a cached poll shows startedAt as soon as a worker claims the render (the claim notifies after its commit)', async () => {
  const a = await f.api.account(10_000);
  // Both worker slots held by renders waiting for their images; the third create stays queued.
  const holds = [`/held/${crypto.randomUUID()}.png`, `/held/${crypto.randomUUID()}.png`];
  const busy = [await video(a.key, f.img.url(holds[0])), await video(a.key, f.img.url(holds[1]))];
  const poll = async (id: string) =>
    (await f.api.call('GET', `/v1/generations/${id}`, { key: a.key })).json;
  const started = async (id: string) => (await poll(id)).startedAt;
  await waitFor(
    'both renders to start',
    async () => (await started(busy[0].json.id)) && (await started(busy[1].json.id)),
  );
  const third = await video(a.key, f.img.url('/b.png'));
  expect(await started(third.json.id)).toBeNull(); // queued (both slots are busy), and now cached
  f.img.release(holds[0]);
  // The event itself: the claim, committed (however long the first render took to free its slot).
  await waitFor(
    'the claim committed',
    async () =>
      (await f.dbh.db.query('SELECT started_at FROM generations WHERE id = $1', [third.json.id]))
        .rows[0].started_at,
    { intervalMs: 10 },
  );
  // Seen by the cached poll long before the cached copy's 20 s lifetime ends (the claim's notification,
  // not expiry); a bound against that lifetime, so a machine busy with the suite's other files cannot fail it.
  const g = await waitFor(
    'the cached poll to show startedAt',
    async () => {
      const x = await poll(third.json.id);
      return x.startedAt && x;
    },
    { timeoutMs: 10_000, intervalMs: 10 },
  );
  expect(g.status).toBe('queued'); // seen while it renders, not only once it has finished
  f.img.release(holds[1]);
  for (const r of [...busy, third]) await f.api.waitFinal(a.key, r.json.id);
  await checkInvariants(f.dbh.db);
});
