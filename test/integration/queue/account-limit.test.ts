// The per-account running limit (src/queue/account-limit.ts) holds across the cluster: many claimers
// taking one account's backlog at once, round after round, never have more of its renders leased than
// the limit, and the claims they hand back leave the jobs as they were (not started, attempt undone).
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../../src/db/pool.ts';
import { Claimer, type ClaimedJob } from '../../../src/queue/claim.ts';
import { enforceAccountLimit } from '../../../src/queue/account-limit.ts';
import { freshDatabase } from '../../helpers/db.ts';

let db: Db;
let drop: () => Promise<void>;

beforeAll(async () => {
  ({ db, drop } = await freshDatabase());
  await db.query(
    `INSERT INTO accounts (id, email) VALUES ('acct_flood', 'f@example.test'), ('acct_small', 's@example.test')`,
  );
  await db.query(`INSERT INTO generations (id, account_id, model_id, inputs, cost_cents, deadline_at)
                  SELECT 'gen_' || lpad(x::text, 6, '0'), 'acct_flood', 'm/free', '{}', 0, now() + interval '1 hour' FROM generate_series(1, 200) x`);
  await db.query(`INSERT INTO generations (id, account_id, model_id, inputs, cost_cents, deadline_at)
                  SELECT 'gen_s' || lpad(x::text, 5, '0'), 'acct_small', 'm/free', '{}', 0, now() + interval '1 hour' FROM generate_series(1, 3) x`);
});
afterAll(async () => {
  await drop?.();
});

const LIMIT = 3;
const runningOf = async (account: string) =>
  (
    await db.query(
      `SELECT count(*)::int AS n FROM generations WHERE account_id = $1 AND status = 'queued' AND lease_until >= now()`,
      [account],
    )
  ).rows[0].n as number;

it('eight claimers claiming and finishing at once never run more of one account than its limit', async () => {
  const finish = (j: ClaimedJob) =>
    db.query(
      `UPDATE generations SET status = 'succeeded', text_output = 'ok', completed_at = now(), lease_owner = NULL, lease_until = NULL
     WHERE id = $1 AND lease_owner = $2 AND attempts = $3`,
      [j.id, j.lease.owner, j.lease.attempt],
    );
  // Renders of the flood running right now, as the workers know them: a job counts from its claim's
  // return (when a worker would start it) until just before it is finished.
  let live = 0;
  let most = 0;
  let served = 0;
  const loop = async (i: number) => {
    const claimer = new Claimer({
      db: db,
      limits: new Map(),
      owner: `w${i}`,
      leaseSeconds: 15,
      accountLimit: LIMIT,
    });
    for (let round = 0; round < 25; round++) {
      const flood = (await claimer.claim(2)).filter(
        (j) => j.account_id === 'acct_flood' || (void finish(j), false),
      );
      live += flood.length;
      served += flood.length;
      most = Math.max(most, live);
      await new Promise((r) => setTimeout(r, Math.random() * 4)); // rendering
      live -= flood.length;
      await Promise.all(flood.map(finish));
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, i) => loop(i)));
  expect(most).toBeLessThanOrEqual(LIMIT);
  expect(await runningOf('acct_flood')).toBe(0);
  expect(served).toBeGreaterThan(LIMIT * 5); // the flood was served all along, not starved by the limit
  // the small account was served beside it
  expect(
    (
      await db.query(
        `SELECT count(*)::int AS n FROM generations WHERE account_id = 'acct_small' AND status = 'succeeded'`,
      )
    ).rows[0].n,
  ).toBe(3);
  // handed-back claims left no trace: every job still waiting has no lease, no attempt, no start
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM generations WHERE status = 'queued' AND (attempts > 0 OR started_at IS NOT NULL OR lease_owner IS NOT NULL)`,
  );
  expect(rows[0].n).toBe(0);
});

it('hands back what a claim took past the limit when a racing claim committed beside it', async () => {
  await db.query(`DELETE FROM generations WHERE status = 'queued'`); // the flood's rest, out of the way
  await db.query(`INSERT INTO accounts (id, email) VALUES ('acct_race', 'r@example.test')`);
  await db.query(`INSERT INTO generations (id, account_id, model_id, inputs, cost_cents, deadline_at)
                  SELECT 'gen_r' || x, 'acct_race', 'm/free', '{}', 0, now() + interval '1 hour' FROM generate_series(1, 4) x`);
  // Two claimers, each within the limit as its own snapshot counted: simulated by claiming without the
  // limit, so both rounds commit 2 renders of an account limited to 3.
  const one = await new Claimer({
    db: db,
    limits: new Map(),
    owner: 'w-one',
    leaseSeconds: 15,
  }).claim(2);
  const two = await new Claimer({
    db: db,
    limits: new Map(),
    owner: 'w-two',
    leaseSeconds: 15,
  }).claim(2);
  expect(await runningOf('acct_race')).toBe(4);
  // The check each claim round ends with, run by the second: it gives back its own excess, nothing else.
  const { keep, handedBack } = await enforceAccountLimit(db, two, LIMIT);
  expect(handedBack.map((j) => j.id)).toEqual([two[1].id]);
  expect(keep.map((j) => j.id)).toEqual([two[0].id]);
  expect(await runningOf('acct_race')).toBe(LIMIT);
  const { rows } = await db.query(
    'SELECT attempts, started_at, lease_owner FROM generations WHERE id = $1',
    [two[1].id],
  );
  expect(rows[0]).toEqual({ attempts: 0, started_at: null, lease_owner: null });
  // the first claimer's renders were not touched
  for (const j of one)
    expect(
      (await db.query('SELECT lease_owner FROM generations WHERE id = $1', [j.id])).rows[0]
        .lease_owner,
    ).toBe('w-one');
});
