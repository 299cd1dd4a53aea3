// The per-account limit on renders running at once, across the cluster (RENDERGATE_ACCOUNT_CONCURRENCY),
// on top of the per-model limits: one account's flood of slow renders cannot hold every worker slot.
//
// Two parts. The claim statement leaves out, as its snapshot counts, every job that would take its
// account past the limit; claimers with one snapshot then compete for the same first jobs of the
// account, so they cannot take more than the limit between them. A snapshot cannot see a claim another
// worker commits at the same moment, though, so a claim round that brings an account to its limit as
// the snapshot counted is checked with a fresh count once it has committed: where the account is over
// its limit, this claimer hands back as many of the jobs it just took of that account as the excess
// (their renders never start). Two claimers racing past a limit may both hand back, leaving a slot idle
// until the next claim round a second later; never over it. A round that leaves every account below its
// limit, as its snapshot saw, is not checked: a concurrent claim can only have taken the jobs its own
// snapshot placed first, the same ones, so the round costs no extra statement on the dispatch path.
import type { Db } from '../db/pool.ts';
import { runningOfAccounts } from '../db/generations-claim.ts';
import { undoClaims } from '../db/generations-attempt.ts';
import type { ClaimedJob } from './types.ts';

/**
 * Splits a claim round into the jobs to run and the ones handed back because their account is over
 * `limit` by a concurrent claim. The latest-ranked jobs of an account go back first.
 */
export async function enforceAccountLimit(
  db: Db,
  jobs: ClaimedJob[],
  limit: number,
): Promise<{ keep: ClaimedJob[]; handedBack: ClaimedJob[] }> {
  if (jobs.length === 0) return { keep: jobs, handedBack: [] };
  const seen = new Map<string, number>();
  for (const j of jobs) {
    // a job claimed without a count (a limited model's locked path) is checked in any case
    const before = j.account_running ?? limit;
    seen.set(j.account_id, Math.max(seen.get(j.account_id) ?? 0, before) + 1);
  }
  const accounts = [...seen].filter(([, after]) => after >= limit).map(([id]) => id);
  if (accounts.length === 0) return { keep: jobs, handedBack: [] };
  const rows = await runningOfAccounts(db, accounts);
  const excess = new Map(rows.filter((r) => r.n > limit).map((r) => [r.account_id, r.n - limit]));
  if (excess.size === 0) return { keep: jobs, handedBack: [] };
  const handedBack: ClaimedJob[] = [];
  for (let i = jobs.length - 1; i >= 0; i--) {
    const left = excess.get(jobs[i].account_id) ?? 0;
    if (left > 0) {
      handedBack.push(jobs[i]);
      excess.set(jobs[i].account_id, left - 1);
    }
  }
  await undoClaims(
    db,
    handedBack[0].lease.owner,
    handedBack.map((j) => ({ id: j.id, attempt: j.lease.attempt })),
  );
  return { keep: jobs.filter((j) => !handedBack.includes(j)), handedBack };
}
