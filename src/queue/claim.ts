// Choosing the next renders, fairly and within each model's cluster-wide concurrency.
//
// Fairness: the candidates are the oldest runnable jobs of each (account, model) pair with queued
// work, found with a loose index scan (cost grows with the number of pairs, not of jobs), ordered
// by how many renders the account already has running, then by when the account last had a render
// started. An account that floods the queue gets a slot only after every account with fewer running
// renders has had one, and, where running counts tie (a model limited to one render at a time, a
// single worker slot: everyone is at 0 whenever a slot frees), accounts take turns instead of
// queueing behind the flood's oldest job.
//
// Model concurrency: for a model with a `concurrency` limit, the claim takes a transaction-scoped
// advisory lock for that model, recounts its running renders and claims only below the limit, so
// the limit holds however many workers claim at once, on however many machines. That claim is one
// statement (db/sql/claim_limited.sql), the lock held to its commit.
//
// One round trip: a worker with free slots claims up to that many jobs with one statement that
// ranks the candidates and locks them in rank order with SKIP LOCKED, so a job another worker is
// claiming at that moment is passed over for the next one instead of ending the claim. Within one
// batch the ranking is the one repeated single claims would give: an account's second job of the
// batch counts its first as running and as just served. Jobs of limited models are not claimed by
// that statement (its snapshot cannot see a claim committed while it runs); it stops at the first
// one in rank order and hands it to the locked path above, and the batch goes on after it.
import type { Db } from '../db/pool.ts';
import { claimBatch, claimLimited, type BatchRow, type ClaimRow } from '../db/generations-claim.ts';
import { enforceAccountLimit } from './account-limit.ts';
import { poolCapacity, serverPreference, type PoolState } from './pool-claim.ts';
import type { ClaimedJob } from './types.ts';

export type { ClaimedJob } from './types.ts';

// The most one statement claims: each count is a prepared statement of its own on every connection.
const MAX_BATCH = 16;

export interface ClaimerOptions {
  db: Db;
  /** Renders of each limited model running at once, cluster-wide. */
  limits: Map<string, number>;
  /** The claiming worker: the owner of every lease it takes. */
  owner: string;
  leaseSeconds: number;
  /** Renders of one account running at once, cluster-wide (null or absent: no limit). */
  accountLimit?: number | null;
  /** Models rendered by pools of servers (pool-claim.ts). */
  pools?: Map<string, PoolState>;
}

export class Claimer {
  private limitsJson: string;
  /** Pool servers by when this claimer last gave one a render (pool-claim.ts serverPreference). */
  private lastServed = new Map<string, number>();
  private served = 0;

  private db: Db;
  private limits: Map<string, number>;
  private owner: string;
  private leaseSeconds: number;
  private accountLimit: number | null;
  private pools: Map<string, PoolState>;

  constructor(o: ClaimerOptions) {
    ({ db: this.db, limits: this.limits, owner: this.owner, leaseSeconds: this.leaseSeconds } = o);
    this.accountLimit = o.accountLimit ?? null;
    this.pools = o.pools ?? new Map<string, PoolState>();
    this.limitsJson = JSON.stringify(Object.fromEntries(this.limits));
  }

  /**
   * The model limits of this claim: a pooled model is limited to what its healthy servers take (0
   * while none is).
   */
  private currentLimits(): string {
    if (this.pools.size === 0) return this.limitsJson;
    const limits = Object.fromEntries(this.limits);
    for (const [model, pool] of this.pools) {
      limits[model] = Math.min(poolCapacity(pool), this.limits.get(model) ?? Infinity);
    }
    return JSON.stringify(limits);
  }

  /** The next job in fairness order, or null when nothing is runnable. */
  async next(): Promise<ClaimedJob | null> {
    return (await this.claim(1))[0] ?? null;
  }

  /**
   * Job `id` of model `modelId`, just queued by this process, claimed without the batch statement
   * when it is of a limited or pooled model (whose batch claim takes a second statement anyway) and
   * no other job is runnable: the batch would have ranked it first, as the only candidate. Null
   * when that does not hold (another job is runnable, the model is at its limit, the job is gone):
   * the caller claims as usual. An account over its limit hands it back, as any claim.
   */
  async claimAlone(id: string, modelId: string): Promise<ClaimedJob[] | null> {
    if (!this.limits.has(modelId) && !this.pools.has(modelId)) return null;
    const job = await this.claimLimited(id, modelId, true);
    if (!job) return null;
    if (this.accountLimit === null) return [job];
    return (await enforceAccountLimit(this.db, [job], this.accountLimit)).keep;
  }

  /**
   * Up to `wanted` jobs, in fairness order; fewer (or none) when fewer are runnable. `queuedHere`:
   * a job this process just queued, tried alone first (claimAlone).
   */
  async claim(
    wanted: number,
    queuedHere: { id: string; modelId: string } | null = null,
  ): Promise<ClaimedJob[]> {
    const alone = queuedHere && (await this.claimAlone(queuedHere.id, queuedHere.modelId));
    if (alone) return alone;
    const jobs: ClaimedJob[] = [];
    // Each round claims what it can up to the first job of a limited model, then that job under its
    // model's lock. The bound only stops a pathological loop; a round normally makes progress or
    // ends it.
    for (let round = 0; jobs.length < wanted && round <= wanted; round++) {
      const asked = Math.min(wanted - jobs.length, MAX_BATCH);
      const { claimed, limited } = await this.claimBatch(asked);
      const taken = [...claimed];
      if (limited) {
        const job = await this.claimLimited(limited.id, limited.model_id);
        if (job) taken.push(job);
      }
      // Nothing ranked after the limited job: no other job was runnable, and no second statement
      // need ask (a job queued since then wakes the worker again, as after a short batch).
      const rest = limited ? limited.more === true : claimed.length === asked;
      // Checked with a fresh count: a render starts only while its account is within its limit.
      const { keep, handedBack } =
        this.accountLimit === null
          ? { keep: taken, handedBack: [] }
          : await enforceAccountLimit(this.db, taken, this.accountLimit);
      jobs.push(...keep);
      // raced another claimer: the next round (a second away) tries again
      if (handedBack.length > 0) break;
      if (!rest) break; // nothing more is runnable
    }
    return jobs;
  }

  private async claimBatch(
    wanted: number,
  ): Promise<{ claimed: ClaimedJob[]; limited: BatchRow | null }> {
    const rows: BatchRow[] = await claimBatch(this.db, wanted, {
      limitsJson: this.currentLimits(),
      owner: this.owner,
      leaseSeconds: this.leaseSeconds,
      accountLimit: this.accountLimit ?? 2147483647,
    });
    const limited = rows.find((r) => r.limited) ?? null;
    const claimed = rows
      .filter((r) => !r.limited)
      .map(({ limited: _l, rank: _r, more: _m, ...job }) => this.leased(job));
    return { claimed, limited };
  }

  private leased(row: ClaimRow): ClaimedJob {
    return { ...row, lease: { owner: this.owner, attempt: row.attempts } };
  }

  /**
   * Job `id` of a limited or pooled model, under the model's lock, in one statement
   * (db/sql/claim_limited.sql): below the model's limit (counted after the lock, in a snapshot that
   * sees every claim of the model committed before it), on the least busy healthy server of its
   * pool, ties to the server this claimer gave a render least recently.
   */
  private async claimLimited(
    id: string,
    modelId: string,
    alone = false,
  ): Promise<ClaimedJob | null> {
    const pool = this.pools.get(modelId);
    const urls = pool ? serverPreference(pool, this.lastServed) : null;
    // A pool none of whose servers is healthy takes nothing (its capacity was 0 in the batch too).
    if (urls && urls.length === 0) return null;
    const row = await claimLimited(this.db, {
      id,
      modelId,
      limit: this.limits.get(modelId) ?? null,
      urls,
      perUrl: pool?.concurrencyPerUrl ?? 1,
      owner: this.owner,
      leaseSeconds: this.leaseSeconds,
      alone,
    });
    if (!row) return null;
    if (row.backend_url) this.lastServed.set(row.backend_url, this.served++);
    return this.leased(row);
  }
}
