// Paces shared by processes (src/admission/shared-pace.ts): several UploadTurns and BodyBudgets on
// one database, as several API processes hold them, give an account one bound, not one each, under
// many parallel requests; a lease is spent where it was taken and lapses; the janitor's prune
// forgets only schedules that are full again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BodyBudget } from '../../../src/admission/body-budget.ts';
import { LEASE_TTL_MS } from '../../../src/admission/shared-pace.ts';
import { UploadTurns } from '../../../src/admission/upload-turns.ts';
import { prunePaces } from '../../../src/db/admission-paces.ts';
import type { Db } from '../../../src/db/pool.ts';
import { freshDatabase } from '../../helpers/db.ts';

let db: Db;
let drop: () => Promise<void>;
beforeAll(async () => ({ db, drop } = await freshDatabase()));
afterAll(async () => drop());

const KiB = 1024;
const MiB = 1024 * KiB;

describe('three processes', () => {
  it("admit an account's bodies within one budget, not three", async () => {
    const procs = [0, 1, 2].map(() => new BodyBudget(db, 1 * MiB, 4 * MiB));
    const t = 1_000_000;
    const admitted = [0, 0, 0];
    await Promise.all(
      Array.from({ length: 600 }, async (_, i) => {
        if ((await procs[i % 3].take('acct-bodies', 64 * KiB, t)) === undefined) admitted[i % 3]++;
      }),
    );
    // 4 MiB of burst is 64 bodies of 64 KiB, and one more goes owed; one process alone admits that
    // many, so three per-process budgets would have admitted 195 (which process gets them is a
    // race)
    const total = admitted.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(65);
    expect(total).toBeGreaterThanOrEqual(60);
  });

  it("give an account's uploads one burst and one schedule of waits, not three", async () => {
    const procs = [0, 1, 2].map(() => new UploadTurns(db, 5, 20));
    const t = Date.now();
    const waited: number[] = [];
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const t0 = performance.now();
        try {
          await procs[i % 3].take('acct-uploads', 1, t);
          waited.push(performance.now() - t0);
          return 'turn';
        } catch {
          return 'refused';
        }
      }),
    );
    // 20 at once, then a turn every 200 ms up to 2 s away: 30 in all across the three (each alone
    // would have let 24 in, 72 together)
    const turns = outcomes.filter((o) => o === 'turn').length;
    expect(turns).toBeLessThanOrEqual(30);
    expect(turns).toBeGreaterThanOrEqual(24);
    expect(Math.max(...waited)).toBeLessThan(2_000 + 500);
  });
});

describe('a lease', () => {
  it('is spent only where it was taken, and lapses after LEASE_TTL_MS', async () => {
    const [a, b] = [0, 1].map(() => new BodyBudget(db, 1 * MiB, 4 * MiB));
    const t = 3_000_000;
    // a's first body leases one more body's worth; b finds the schedule past it
    expect(await a.take('acct-lease', MiB, t)).toBeUndefined();
    const { rows } = await db.query(
      `SELECT clear_at, leased FROM admission_paces WHERE subject = 'acct-lease'`,
    );
    expect(rows[0]).toEqual({ clear_at: t - 2000, leased: 1000 });
    expect(a.take('acct-lease', MiB, t)).toBeUndefined(); // from the lease, in memory
    expect(await b.take('acct-lease', MiB, t)).toBeUndefined();
    // a new lease of a, unspent: once it lapses, a asks the database again
    const lapsed = a.take('acct-lease', MiB / 2, t + LEASE_TTL_MS);
    expect(lapsed).toBeInstanceOf(Promise);
    await lapsed;
  });
});

it('prunes only the schedules that are full again', async () => {
  const turns = new UploadTurns(db, 5, 20);
  const now = Date.now();
  await turns.take('acct-old', 1, now - 3_600_000);
  await turns.take('acct-new', 1, now);
  await prunePaces(db, now);
  const { rows } = await db.query(
    `SELECT subject FROM admission_paces WHERE subject LIKE 'acct-%' AND pace = 'uploads'`,
  );
  expect(rows.map((r) => r.subject).sort()).toEqual(['acct-new', 'acct-uploads']);
});
