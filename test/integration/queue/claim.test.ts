// The claimer alone, on a real database: accounts take turns on a model limited to one render at a
// time (where every account is at zero running renders whenever the slot frees), and the limit holds
// against two claimers until a lease lapses; a batch claim takes what as many single claims would, in
// their order, and two claimers sharing a backlog never take a job twice.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../../src/db/pool.ts';
import { Claimer } from '../../../src/queue/claim.ts';
import { claimLimited } from '../../../src/db/generations-claim.ts';
import { serverPreference } from '../../../src/queue/pool-claim.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { counting } from '../../helpers/counting-db.ts';

let db: Db;
let drop: () => Promise<void>;

beforeAll(async () => {
  ({ db, drop } = await freshDatabase());
  await db.query(
    `INSERT INTO accounts (id, email) SELECT 'acct_' || x, x || '@example.test' FROM unnest(ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']) x`,
  );
});
afterAll(async () => {
  await drop?.();
});

let seq = 0;
async function enqueue(account: string, model: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `gen_${String(++seq).padStart(6, '0')}`;
    await db.query(
      `INSERT INTO generations (id, account_id, model_id, inputs, cost_cents, deadline_at, created_at, run_after)
                    VALUES ($1, $2, $3, '{}', 0, now() + interval '1 hour', now() - make_interval(secs => 1000 - $4), now() - make_interval(secs => 1000 - $4))`,
      [id, account, model, seq],
    );
    ids.push(id);
  }
  return ids;
}

const finish = (id: string) =>
  db.query(
    `UPDATE generations SET status = 'succeeded', text_output = 'ok', completed_at = clock_timestamp(), lease_owner = NULL, lease_until = NULL WHERE id = $1`,
    [id],
  );

it('takes turns between accounts on a model limited to one render, instead of draining the flood first', async () => {
  const a = await enqueue('acct_a', 'm/one', 6);
  const b = await enqueue('acct_b', 'm/one', 2); // queued after all of A's
  const claimer = new Claimer({
    db: db,
    limits: new Map([['m/one', 1]]),
    owner: 'w1',
    leaseSeconds: 15,
  });
  const order: string[] = [];
  for (let job = await claimer.next(); job; job = await claimer.next()) {
    order.push(job.id);
    await finish(job.id);
  }
  expect(order).toEqual([a[0], b[0], a[1], b[1], a[2], a[3], a[4], a[5]]);
});

it("holds a model limit against two claimers until the running render's lease lapses", async () => {
  const [x, y] = await enqueue('acct_a', 'm/limited', 2);
  const one = new Claimer({
    db: db,
    limits: new Map([['m/limited', 1]]),
    owner: 'w1',
    leaseSeconds: 15,
  });
  const two = new Claimer({
    db: db,
    limits: new Map([['m/limited', 1]]),
    owner: 'w2',
    leaseSeconds: 15,
  });
  const [first, second] = await Promise.all([one.next(), two.next()]);
  expect([first?.id, second?.id].filter(Boolean)).toEqual([x]);
  expect(await two.next()).toBeNull();
  // the worker holding x died: once its lease lapses, x (oldest) is claimed again, and only x
  await db.query(`UPDATE generations SET lease_until = now() - interval '1 second' WHERE id = $1`, [
    x,
  ]);
  const again = await two.next();
  expect(again).toMatchObject({ id: x, attempts: 2 });
  expect(await one.next()).toBeNull();
  await finish(x);
  expect((await one.next())?.id).toBe(y);
});

/** Takes claimed jobs back to never claimed: the same queue again for another claimer. */
const rewind = (ids: string[]) =>
  db.query(
    `UPDATE generations SET lease_owner = NULL, lease_until = NULL, attempts = 0, started_at = NULL WHERE id = ANY($1)`,
    [ids],
  );

/** The ids that `wanted` single claims take, then (on the same queue) one batch claim of `wanted`. */
async function singleThenBatch(
  limits: Map<string, number>,
  wanted: number,
): Promise<[string[], string[]]> {
  const claimer = new Claimer({ db: db, limits: limits, owner: 'w1', leaseSeconds: 15 });
  const single: string[] = [];
  for (let i = 0; i < wanted; i++) single.push((await claimer.next())!.id);
  await rewind(single);
  const batch = (await claimer.claim(wanted)).map((j) => j.id);
  await rewind(batch);
  return [single, batch];
}

it('claims a batch as single claims would: fewer running first, then least recently served, each claim counting the earlier ones', async () => {
  // c was served an hour ago, d never, e has one render running (started 10 s ago), f was served a day ago.
  await db.query(`INSERT INTO generations (id, account_id, model_id, inputs, cost_cents, deadline_at, status, text_output, completed_at, started_at)
                  VALUES ('gen_c_history', 'acct_c', 'm/batch', '{}', 0, now(), 'succeeded', 'ok', now(), now() - interval '1 hour'),
                         ('gen_f_history', 'acct_f', 'm/batch', '{}', 0, now(), 'succeeded', 'ok', now(), now() - interval '1 day')`);
  await db.query(`INSERT INTO generations (id, account_id, model_id, inputs, cost_cents, deadline_at, lease_owner, lease_until, started_at, attempts)
                  VALUES ('gen_e_running', 'acct_e', 'm/batch', '{}', 0, now() + interval '1 hour', 'w0', now() + interval '1 hour', now() - interval '10 seconds', 1)`);
  const c = await enqueue('acct_c', 'm/batch', 4);
  const d = await enqueue('acct_d', 'm/batch', 2);
  const e = await enqueue('acct_e', 'm/batch', 2);
  const f = await enqueue('acct_f', 'm/batch', 1);
  const [single, batch] = await singleThenBatch(new Map(), 6);
  expect(single).toEqual([d[0], f[0], c[0], e[0], d[1], c[1]]);
  expect(batch).toEqual(single);
  await Promise.all([...c, ...d, ...e, ...f, 'gen_e_running'].map(finish));
});

it("stops a batch at a job of a limited model, takes that one under the model's lock, and goes on after it", async () => {
  const g = await enqueue('acct_g', 'm/lim', 3);
  const h = await enqueue('acct_h', 'm/free', 3);
  const limits = new Map([['m/lim', 1]]);
  const [single, batch] = await singleThenBatch(limits, 4);
  // one render of m/lim at a time: g gets one, h the rest, in turns while g is ahead on running count
  expect(single).toEqual([g[0], h[0], h[1], h[2]]);
  expect(batch).toEqual(single);
  await Promise.all([...g, ...h].map(finish));
});

it('shares a backlog between two claimers: each passes over the jobs the other is taking', async () => {
  const ids = (
    await Promise.all(['acct_i', 'acct_h', 'acct_g'].map((a) => enqueue(a, 'm/shared', 2)))
  ).flat();
  const [one, two] = await Promise.all([
    new Claimer({ db: db, limits: new Map(), owner: 'w1', leaseSeconds: 15 }).claim(3),
    new Claimer({ db: db, limits: new Map(), owner: 'w2', leaseSeconds: 15 }).claim(3),
  ]);
  expect([...one, ...two].map((j) => j.id).sort()).toEqual([...ids].sort());
  await Promise.all(ids.map(finish));
});

it("claims a lone job of a pooled model in two statements: the batch, then the model's claim", async () => {
  const [j] = await enqueue('acct_a', 'm/pooled', 1);
  // Every statement the claimer sends, through the pool (the claim has no transaction of its own).
  const { db: counted, names: sent } = counting(db);
  const pools = new Map([
    ['m/pooled', { urls: ['http://a', 'http://b'], concurrencyPerUrl: 1, healthy: () => true }],
  ]);
  const claimer = new Claimer({
    db: counted,
    limits: new Map(),
    owner: 'w1',
    leaseSeconds: 15,
    pools,
  });
  const jobs = await claimer.claim(4);
  expect(jobs.map((x) => [x.id, x.backend_url])).toEqual([[j, 'http://a']]);
  // Nothing was ranked after it: no second batch asks again.
  expect(sent).toEqual(['claim-batch-4', 'claim-limited']);
  // The next job of the model goes to the other server (ties to the one served least recently).
  const [k] = await enqueue('acct_b', 'm/pooled', 1);
  expect((await claimer.claim(1)).map((x) => [x.id, x.backend_url])).toEqual([[k, 'http://b']]);
  // Both servers full: a third waits.
  await enqueue('acct_c', 'm/pooled', 1);
  expect(await claimer.claim(1)).toEqual([]);
  await db.query(`DELETE FROM generations WHERE model_id = 'm/pooled'`);
});

it('claims a job this process just queued alone, in one statement, only when nothing else is runnable', async () => {
  const { db: counted, names: sent } = counting(db);
  const pools = new Map([
    ['m/alone', { urls: ['http://a'], concurrencyPerUrl: 2, healthy: () => true }],
  ]);
  const claimer = new Claimer({
    db: counted,
    limits: new Map(),
    owner: 'w1',
    leaseSeconds: 15,
    pools,
  });
  const [j] = await enqueue('acct_a', 'm/alone', 1);
  const jobs = await claimer.claim(4, { id: j, modelId: 'm/alone' });
  expect(jobs.map((x) => [x.id, x.backend_url])).toEqual([[j, 'http://a']]);
  expect(sent).toEqual(['claim-limited']);
  // Another job runnable (older, of another account): the batch decides, fairly, as without it.
  sent.length = 0;
  const [older] = await enqueue('acct_b', 'm/free', 1);
  const [k] = await enqueue('acct_c', 'm/alone', 1);
  const both = await claimer.claim(4, { id: k, modelId: 'm/alone' });
  expect(both.map((x) => x.id).sort()).toEqual([older, k].sort());
  expect(sent[0]).toBe('claim-limited');
  expect(sent).toContain('claim-batch-4');
  await Promise.all([j, k, older].map(finish));
});

it('gives a pooled job the healthy server with the fewest running renders below its limit, ties to the least recently served', async () => {
  const pool = (down: string[] = [], per = 2) => ({
    urls: ['http://a', 'http://b', 'http://c'],
    concurrencyPerUrl: per,
    healthy: (u: string) => !down.includes(u),
  });
  /** The server the claim gives one job, with `running` renders leased on each server; null: none. */
  async function pick(
    p: ReturnType<typeof pool>,
    running: { backend_url: string; n: number }[],
    lastServed?: Map<string, number>,
  ): Promise<string | null> {
    await db.query(`DELETE FROM generations WHERE model_id = 'm/pick'`);
    for (const r of running) {
      for (const id of await enqueue('acct_d', 'm/pick', r.n))
        await db.query(
          `UPDATE generations SET lease_owner = 'other', lease_until = now() + interval '1 minute',
             started_at = now(), backend_url = $2 WHERE id = $1`,
          [id, r.backend_url],
        );
    }
    const [job] = await enqueue('acct_e', 'm/pick', 1);
    const urls = serverPreference(p, lastServed);
    if (urls.length === 0) return null; // the claimer asks nothing of a pool with no healthy server
    const row = await claimLimited(db, {
      id: job,
      modelId: 'm/pick',
      limit: null,
      urls,
      perUrl: p.concurrencyPerUrl,
      owner: 'w1',
      leaseSeconds: 15,
    });
    return row?.backend_url ?? null;
  }
  expect(await pick(pool(), [])).toBe('http://a');
  expect(await pick(pool(), [{ backend_url: 'http://a', n: 1 }])).toBe('http://b');
  expect(
    await pick(pool(['http://b']), [
      { backend_url: 'http://a', n: 1 },
      { backend_url: 'http://c', n: 1 },
    ]),
  ).toBe('http://a');
  expect(
    await pick(pool([], 1), [
      { backend_url: 'http://a', n: 1 },
      { backend_url: 'http://b', n: 1 },
      { backend_url: 'http://c', n: 1 },
    ]),
  ).toBeNull();
  expect(await pick(pool(['http://a', 'http://b', 'http://c']), [])).toBeNull();
  // Ties go to the server given a render least recently, so renders that never overlap still spread.
  expect(await pick(pool(), [], new Map([['http://a', 0]]))).toBe('http://b');
  const served = new Map([
    ['http://a', 2],
    ['http://b', 1],
    ['http://c', 0],
  ]);
  expect(await pick(pool(), [], served)).toBe('http://c');
  expect(await pick(pool(), [{ backend_url: 'http://c', n: 1 }], served)).toBe('http://b');
  await db.query(`DELETE FROM generations WHERE model_id = 'm/pick'`);
});
