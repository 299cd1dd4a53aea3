// The leased rate limiter on the real database: never more than the limit however many processes
// share a key, exact for one process and for small limits, at most ⌈limit/64⌉ lost per extra
// process, a fresh count each minute, and one statement per lease rather than per request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/db/pool.ts';
import { RateLimits } from '../../../src/admission/rate-limits.ts';
import { counting } from '../../helpers/counting-db.ts';
import { freshDatabase } from '../../helpers/db.ts';

let db: Db;
let drop: () => Promise<void>;
beforeAll(async () => ({ db, drop } = await freshDatabase()));
afterAll(async () => drop());

/** A clock the test moves; starts 5 s into a minute. */
function clock() {
  let t = Math.floor(Date.now() / 60_000) * 60_000 + 5_000;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

/** Sends `n` requests at once, spread round-robin over the limiters; returns how many were admitted by each. */
async function burst(
  limiters: RateLimits[],
  key: string,
  limit: number,
  n: number,
): Promise<number[]> {
  const admitted = limiters.map(() => 0);
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const d = await limiters[i % limiters.length].consume(key, limit);
      if (d.allowed) admitted[i % limiters.length]++;
    }),
  );
  return admitted;
}

async function windowCount(key: string): Promise<number> {
  const { rows } = await db.query(
    'SELECT coalesce(sum(used), 0)::int AS n FROM rate_windows WHERE key_id = $1',
    [key],
  );
  return rows[0].n;
}

describe('leased rate limits', () => {
  it('one process admits exactly the limit, with remaining counting down and a reset within the minute', async () => {
    const c = clock();
    const rl = new RateLimits(db, c.now);
    const seen = [];
    for (let i = 0; i < 25; i++) seen.push(await rl.consume('k-one', 20));
    expect(seen.filter((d) => d.allowed)).toHaveLength(20);
    expect(seen.slice(0, 20).map((d) => d.remaining)).toEqual(
      Array.from({ length: 20 }, (_, i) => 19 - i),
    );
    expect(seen[24]).toEqual({ allowed: false, limit: 20, remaining: 0, resetSeconds: 55 });
  });

  it('a large limit in one process is exact too, and costs one statement per lease, not per request', async () => {
    const c = clock();
    const counted = counting(db);
    const rl = new RateLimits(counted.db, c.now);
    const admitted = await burst([rl], 'k-big', 6400, 7000);
    expect(admitted).toEqual([6400]);
    expect(await windowCount('k-big')).toBe(6400);
    // Leases 1, 2, 4, … 64 (127), then 100 each: 63 more, the last one granted short, which tells
    // the process the window is spent: 70 statements for 7,000 requests.
    expect(counted.queries()).toBe(70);
  });

  it('three processes never admit more than the limit together, and lose at most ⌈limit/64⌉ each to unspent leases', async () => {
    const c = clock();
    const procs = [new RateLimits(db, c.now), new RateLimits(db, c.now), new RateLimits(db, c.now)];
    for (let round = 0; round < 3; round++) {
      const key = `k-three-${round}`;
      const admitted = await burst(procs, key, 6400, 9000);
      const total = admitted.reduce((a, b) => a + b, 0);
      expect(total).toBeLessThanOrEqual(6400);
      expect(total).toBeGreaterThanOrEqual(6400 - 2 * 100);
      expect(await windowCount(key)).toBe(6400);
      for (const n of admitted) expect(n).toBeGreaterThan(0);
    }
  });

  it('small limits are exact across processes', async () => {
    const c = clock();
    const procs = [new RateLimits(db, c.now), new RateLimits(db, c.now)];
    expect((await burst(procs, 'k-small', 40, 60)).reduce((a, b) => a + b, 0)).toBe(40);
  });

  it('a new minute starts a new count; the old window is left for the janitor', async () => {
    const c = clock();
    const rl = new RateLimits(db, c.now);
    expect(await burst([rl], 'k-roll', 10, 15)).toEqual([10]);
    c.advance(60_000);
    const d = await rl.consume('k-roll', 10);
    expect(d).toMatchObject({ allowed: true, remaining: 9 });
    const { rows } = await db.query(
      'SELECT count(*)::int AS n FROM rate_windows WHERE key_id = $1',
      ['k-roll'],
    );
    expect(rows[0].n).toBe(2);
  });

  it('a database error fails the waiting requests and the next request tries again', async () => {
    const c = clock();
    let fail = true;
    const rl = new RateLimits(counting(db, () => fail).db, c.now);
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => rl.consume('k-flaky', 10)),
    );
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    fail = false;
    expect(await rl.consume('k-flaky', 10)).toMatchObject({ allowed: true, remaining: 9 });
  });
});

describe("an account's keys together", () => {
  const key = (id: string, limit: number, liveKeys: number, accountLimit = limit) => ({
    id,
    accountId: 'acct-shared',
    rateLimitPerMinute: limit,
    account: { liveKeys, rateLimitPerMinute: accountLimit },
  });

  it('admit no more than the highest limit among them; a lone key counts only its own', async () => {
    const c = clock();
    const rl = new RateLimits(db, c.now);
    // three keys of 5 a minute: 5 in all, the sixth refused as the account's, whichever key it
    // uses
    const keys = ['k-a', 'k-b', 'k-c'].map((id) => key(id, 5, 3));
    const seen = [];
    for (let i = 0; i < 9; i++) seen.push(await rl.consumeKey(keys[i % 3]));
    expect(seen.filter((d) => d.allowed)).toHaveLength(5);
    expect(seen[5]).toMatchObject({ allowed: false, limit: 5, ofAccount: true });
    expect(seen.slice(0, 5).map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0]);
    // from memory too (where it can decide: a lease of its own spent asks the database), spending
    // nothing when either bucket refuses
    expect(rl.consumeKeyLocal(keys[0])?.allowed).not.toBe(true);
    expect(await windowCount('keys:acct-shared')).toBe(5);
    // a request the account refused was counted against its key: k-c's three
    expect(await windowCount('k-c')).toBe(3);
    // a key of its own account alone: its own limit only, no shared bucket
    const lone = { ...key('k-lone', 5, 1), accountId: 'acct-lone' };
    for (let i = 0; i < 5; i++) expect((await rl.consumeKey(lone)).allowed).toBe(true);
    expect(await windowCount('keys:acct-lone')).toBe(0);
  });

  it("keep each key's own limit beneath the account's", async () => {
    const c = clock();
    const rl = new RateLimits(db, c.now);
    // an operator's key of 100 beside the owner's key of 2: the owner's key still stops at 2
    const small = { ...key('k-owner', 2, 2, 100), accountId: 'acct-mixed' };
    const large = { ...key('k-operator', 100, 2, 100), accountId: 'acct-mixed' };
    const got = [];
    for (let i = 0; i < 4; i++) got.push((await rl.consumeKey(small)).allowed);
    expect(got).toEqual([true, true, false, false]);
    for (let i = 0; i < 10; i++) expect((await rl.consumeKey(large)).allowed).toBe(true);
    // the shared count holds the 12 admitted (and what its last lease took ahead, at most 2)
    expect(await windowCount('keys:acct-mixed')).toBeGreaterThanOrEqual(12);
  });

  it('from many parallel requests over many keys and two processes, never admit more than the limit', async () => {
    const c = clock();
    const procs = [new RateLimits(db, c.now), new RateLimits(db, c.now)];
    const keys = Array.from({ length: 20 }, (_, i) => ({
      ...key(`k-many-${i}`, 600, 20),
      accountId: 'acct-many',
    }));
    let admitted = 0;
    await Promise.all(
      Array.from({ length: 2000 }, async (_, i) => {
        if ((await procs[i % 2].consumeKey(keys[i % 20])).allowed) admitted++;
      }),
    );
    expect(admitted).toBeLessThanOrEqual(600);
    expect(admitted).toBeGreaterThanOrEqual(600 - Math.ceil(600 / 64));
  });
});
