// Polls answered from memory stay correct: any visible change to a generation, made by anyone through the
// database, reaches every API process's cache through the trigger's notification; a write through this
// process is read back at once; a lost LISTEN connection turns the cache off until it is back; and a
// read that raced a change is not kept.
import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import pino from 'pino';
import { serviceFixture } from '../../helpers/fixture.ts';
import { startTestService, client } from '../../helpers/service.ts';
import { GenerationCache, type CachedGeneration } from '../../../src/services/generation-cache.ts';
import type { GenerationRow } from '../../../src/services/generation-view.ts';
import { waitFor } from '../../helpers/wait.ts';

const f = serviceFixture({ role: 'api' });

async function created(key: string) {
  const r = await f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId: 'rendergate/shot-list', inputs: { text: 'A gull lands. The tide turns.' } },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(r.status).toBe(202);
  return r.json.id as string;
}

/** How long the service keeps a cached generation without a notification (src/app.ts). */
const CACHE_LIFETIME_MS = 20_000;
/** Polls `id` until `check` holds; returns how long that took. */
async function pollUntil(
  key: string,
  id: string,
  check: (r: { status: number; json: any }) => boolean,
) {
  const t0 = Date.now();
  await waitFor(
    `a poll of ${id} to show the change`,
    async () => check(await f.api.call('GET', `/v1/generations/${id}`, { key })),
    { intervalMs: 5 },
  );
  return Date.now() - t0;
}

/** How many generation reads the service's pool has run (its query method wrapped once). */
let reads = 0;
function countReads() {
  const pool = f.svc.running.infra.db as unknown as { query: (...a: any[]) => any };
  if ((pool as { counted?: boolean }).counted) return;
  const query = pool.query.bind(pool);
  pool.query = (...args: any[]) => {
    if ((args[0] as { name?: string })?.name === 'gen-get') reads++;
    return query(...args);
  };
  (pool as { counted?: boolean }).counted = true;
}
const gets = () => {
  countReads();
  return Promise.resolve(reads);
};

it('repeated polls are answered from memory, and a change made in the database shows at once', async () => {
  const a = await f.api.account(10_000);
  const id = await created(a.key);
  const first = await f.api.call('GET', `/v1/generations/${id}`, { key: a.key });
  expect(first.status).toBe(200);
  expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
  // A change nobody in this process made: as a worker on another machine would finish the render.
  await f.dbh.db.query(
    `UPDATE generations SET status = 'succeeded', text_output = 'done', completed_at = now() WHERE id = $1`,
    [id],
  );
  // Seen long before the cache entry's 20 s lifetime ends: the change arrived by notification, not by
  // expiry (a bound against that lifetime, not a tight one: a loaded machine cannot make it flaky).
  const ms = await pollUntil(a.key, id, (r) => r.json.status === 'succeeded');
  expect(ms).toBeLessThan(CACHE_LIFETIME_MS / 2);
  const done = await f.api.call('GET', `/v1/generations/${id}`, { key: a.key });
  expect(done.json).toMatchObject({ status: 'succeeded', textOutput: 'done' });
  // Other accounts still get 404 from the cached copy.
  const other = await f.api.account(0);
  expect((await f.api.call('GET', `/v1/generations/${id}`, { key: other.key })).status).toBe(404);
});

it('a lease renewal sends nothing; a deletion in the database is seen as 404', async () => {
  const a = await f.api.account(10_000);
  const id = await created(a.key);
  await f.api.call('GET', `/v1/generations/${id}`, { key: a.key });
  const seen: string[] = [];
  const listener = new GenerationCache(f.dbh.url, 10, () => {});
  const spy = listener as unknown as { invalidate: (id: string) => void };
  const original = spy.invalidate.bind(listener);
  spy.invalidate = (x) => {
    seen.push(x);
    original(x);
  };
  await listener.start();
  try {
    await f.dbh.db.query(
      `UPDATE generations SET lease_until = now() + interval '15 s', lease_owner = 'w' WHERE id = $1`,
      [id],
    );
    await f.dbh.db.query(`UPDATE generations SET attempts = attempts + 1 WHERE id = $1`, [id]);
    await f.dbh.db.query(`UPDATE generations SET deleted_at = now() WHERE id = $1`, [id]);
    await pollUntil(a.key, id, (r) => r.status === 404);
    // The deletion's notification is the later event: one connection's notifications arrive in commit
    // order, so any the two earlier updates had sent would have come before it.
    await waitFor('the deletion notified', () => seen.length > 0);
    expect(seen).toEqual([id]);
  } finally {
    await listener.stop();
  }
});

it('a DELETE through the API is read back at once: no window where the old state is served', async () => {
  const a = await f.api.account(10_000);
  for (let i = 0; i < 20; i++) {
    const id = await created(a.key);
    expect((await f.api.call('GET', `/v1/generations/${id}`, { key: a.key })).json.status).toBe(
      'queued',
    );
    expect((await f.api.call('DELETE', `/v1/generations/${id}`, { key: a.key })).status).toBe(200);
    expect((await f.api.call('GET', `/v1/generations/${id}`, { key: a.key })).status).toBe(404);
  }
});

it('a second API process sees changes made through the first at once', async () => {
  const second = await startTestService(f.dbh.url, { role: 'api' });
  try {
    const api2 = client(second.base);
    const a = await f.api.account(10_000);
    const id = await created(a.key);
    expect((await api2.call('GET', `/v1/generations/${id}`, { key: a.key })).json.status).toBe(
      'queued',
    );
    expect((await f.api.call('DELETE', `/v1/generations/${id}`, { key: a.key })).status).toBe(200);
    // Gone for the second API by notification, well before its cached copy would expire.
    await waitFor(
      'the second API to see the render deleted',
      async () => (await api2.call('GET', `/v1/generations/${id}`, { key: a.key })).status === 404,
      { timeoutMs: CACHE_LIFETIME_MS / 2, intervalMs: 0 },
    );
  } finally {
    await second.stop();
  }
});

it('while its LISTEN connection is down the cache is bypassed, and it comes back by itself', async () => {
  const a = await f.api.account(10_000);
  const id = await created(a.key);
  await gets();
  await f.api.call('GET', `/v1/generations/${id}`, { key: a.key });
  const before = await gets();
  expect(before).toBeGreaterThan(0);
  for (let i = 0; i < 5; i++) await f.api.call('GET', `/v1/generations/${id}`, { key: a.key });
  expect(await gets()).toBe(before); // served from memory
  /** Whether a poll right after another one still reads the database (the cache is off). */
  const readsAreNotKept = async () => {
    await f.api.call('GET', `/v1/generations/${id}`, { key: a.key });
    const n = await gets();
    await f.api.call('GET', `/v1/generations/${id}`, { key: a.key });
    return (await gets()) > n;
  };

  // Cut the listener, then change the row while it is away: its notification is lost.
  await f.dbh.db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                        WHERE datname = current_database() AND query LIKE 'LISTEN "rendergate_generation_changed"%'`);
  await waitFor('the cache to be bypassed', readsAreNotKept, { intervalMs: 5 });
  await f.dbh.db.query(
    `UPDATE generations SET status = 'succeeded', text_output = 'x', completed_at = now() WHERE id = $1`,
    [id],
  );
  expect((await f.api.call('GET', `/v1/generations/${id}`, { key: a.key })).json.status).toBe(
    'succeeded',
  );

  // Reconnected by itself (within about a second): reads are kept again, and changes invalidate them again.
  await waitFor('the cache to keep reads again', async () => !(await readsAreNotKept()), {
    intervalMs: 100,
  });
  const again = await gets();
  for (let i = 0; i < 5; i++) await f.api.call('GET', `/v1/generations/${id}`, { key: a.key });
  expect(await gets()).toBe(again);
  await f.dbh.db.query(`UPDATE generations SET text_output = 'y' WHERE id = $1`, [id]);
  await pollUntil(a.key, id, (r) => r.json.textOutput === 'y');
});

it('a read under way when its row changes is not kept, and concurrent reads share one', async () => {
  const cache = new GenerationCache(f.dbh.url, 10, () => {});
  await cache.start();
  try {
    const entry = (status: string): CachedGeneration => ({
      row: { status } as GenerationRow,
      accountId: 'a',
      json: status,
    });
    let loads = 0;
    let release!: (v: CachedGeneration) => void;
    const slow = () => {
      loads++;
      return new Promise<CachedGeneration>((r) => {
        release = r;
      });
    };
    const p1 = cache.get('gen_x', slow);
    const p2 = cache.get('gen_x', slow);
    expect(loads).toBe(1);
    cache.invalidate('gen_x');
    release(entry('old'));
    expect((await p1)!.json).toBe('old');
    expect((await p2)!.json).toBe('old');
    // Not kept: the next read loads again, and that one is kept.
    expect(
      (await cache.get('gen_x', () => {
        loads++;
        return Promise.resolve(entry('new'));
      }))!.json,
    ).toBe('new');
    expect(
      (await cache.get('gen_x', () => {
        loads++;
        return Promise.resolve(entry('newer'));
      }))!.json,
    ).toBe('new');
    expect(loads).toBe(2);
    // Not found is never kept.
    expect(await cache.get('gen_y', () => Promise.resolve(null))).toBeNull();
    expect((await cache.get('gen_y', () => Promise.resolve(entry('made'))))!.json).toBe('made');
  } finally {
    await cache.stop();
  }
});

it('the oldest entries make room when it is full', async () => {
  const cache = new GenerationCache(f.dbh.url, 3, (m) => pino().warn(m));
  await cache.start();
  try {
    const entry = (s: string): CachedGeneration => ({
      row: {} as GenerationRow,
      accountId: 'a',
      json: s,
    });
    for (const id of ['a', 'b', 'c', 'd']) await cache.get(id, () => Promise.resolve(entry(id)));
    let loaded = false;
    expect(
      (await cache.get('a', () => {
        loaded = true;
        return Promise.resolve(entry('a2'));
      }))!.json,
    ).toBe('a2');
    expect(loaded).toBe(true);
    expect((await cache.get('d', () => Promise.resolve(entry('d2'))))!.json).toBe('d');
  } finally {
    await cache.stop();
  }
});

it("a create's 202 body, its replays and the first poll are the same document", async () => {
  const a = await f.api.account(10_000);
  const idem = crypto.randomUUID();
  const body = {
    modelId: 'rendergate/image-to-video',
    inputs: {
      prompt: 'a slow push-in, "quoted" é',
      image: 'https://example.com/a.png',
      guidance_scale: 0.125,
      duration: 10,
    },
  };
  const first = await f.api.call('POST', '/v1/generations', {
    key: a.key,
    body,
    headers: { 'idempotency-key': idem },
  });
  expect(first.status, first.text).toBe(202);
  const poll = await f.api.call('GET', `/v1/generations/${first.json.id}`, { key: a.key });
  expect(poll.json).toEqual(first.json);
  expect(first.json).toMatchObject({
    status: 'queued',
    refundedCents: 0,
    startedAt: null,
    completedAt: null,
  });
  expect(new Date(first.json.createdAt).toISOString()).toBe(first.json.createdAt);
  // Replays come from the generation: still the 202 of its creation after it changed.
  await f.dbh.db.query(`UPDATE generations SET started_at = now() WHERE id = $1`, [first.json.id]);
  for (let i = 0; i < 2; i++) {
    const again = await f.api.call('POST', '/v1/generations', {
      key: a.key,
      body,
      headers: { 'idempotency-key': idem },
    });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
  }
});
