// Choosing the next renders, fairly and within each model's cluster-wide concurrency.
//
// Fairness: the candidates are the oldest runnable jobs of each (account, model) pair with queued work,
// found with a loose index scan (cost grows with the number of pairs, not of jobs), ordered by how many
// renders the account already has running, then by when the account last had a render started. An
// account that floods the queue gets a slot only after every account with fewer running renders has
// had one, and, where running counts tie (a model limited to one render at a time, a single worker
// slot: everyone is at 0 whenever a slot frees), accounts take turns instead of queueing behind the
// flood's oldest job.
//
// Model concurrency: for a model with a `concurrency` limit, the claim takes a transaction-scoped
// advisory lock for that model, recounts its running renders and claims only below the limit, so the
// limit holds however many workers claim at once, on however many machines.
//
// One round trip: a worker with free slots claims up to that many jobs with one statement that ranks
// the candidates and locks them in rank order with SKIP LOCKED, so a job another worker is claiming
// at that moment is passed over for the next one instead of ending the claim. Within one batch the
// ranking is the one repeated single claims would give: an account's second job of the batch counts
// its first as running and as just served. Jobs of limited models are not claimed by that statement
// (its snapshot cannot see a claim committed while it runs); it stops at the first one in rank order
// and hands it to the locked path above, and the batch goes on after it.
import type { Db, Tx } from '../db/pool.ts';
import type { Lease } from '../db/lease.ts';
import { enforceAccountLimit } from './account-limit.ts';
import { pickServer, poolCapacity, RUNNING_PER_URL, type PoolState } from './pool-claim.ts';

export interface ClaimedJob {
  id: string; account_id: string; model_id: string; inputs: Record<string, string | number | boolean>; attempts: number; waited: number;
  /** This attempt's fencing token (db/lease.ts): every later statement for the attempt is guarded by it. */
  lease: Lease;
  /** The account's running renders as the claim's snapshot counted them (account-limit.ts); absent when not counted. */
  account_running?: number | null;
  /** The pool server the render was given (pool-claim.ts); absent for models without a pool. */
  backend_url?: string | null;
}
type ClaimedRow = Omit<ClaimedJob, 'lease'>;

// The lease a claim takes; `owner` and `seconds` are the statement's parameters for them.
const lease = (owner: string, seconds: string) => `attempts = attempts + 1, lease_owner = ${owner},
  lease_until = now() + make_interval(secs => ${seconds}), started_at = coalesce(started_at, clock_timestamp())`;

/**
 * Claims up to `wanted` jobs: $1 model limits (jsonb {model: limit}), $2 owner, $3 lease seconds, $4 the
 * per-account limit (account-limit.ts: jobs that would take their account past it, as this snapshot
 * counts, are left out).
 * Returns the claimed jobs in rank order (limited = false), then, when fewer than `wanted` were
 * claimed because a job of a limited model came first, that job, not claimed (limited = true).
 *
 * `wanted` is written into the text, not passed, so that every count has its own prepared statement
 * with one plan: PostgreSQL then keeps the generic plan (planning this statement costs more than
 * running it), and, knowing how few rows each step yields, locks the chosen rows by primary key
 * instead of scanning the queue.
 */
function claimBatchSql(wanted: number): string {
  if (!Number.isSafeInteger(wanted) || wanted < 1) throw new Error(`claim: bad count ${wanted}`);
  return `
WITH RECURSIVE pairs AS (
  (SELECT account_id, model_id FROM generations WHERE status = 'queued' ORDER BY account_id, model_id LIMIT 1)
  UNION ALL
  SELECT n.account_id, n.model_id FROM pairs p, LATERAL (
    SELECT account_id, model_id FROM generations
    WHERE status = 'queued' AND (account_id, model_id) > (p.account_id, p.model_id)
    ORDER BY account_id, model_id LIMIT 1) n
), running AS (
  SELECT account_id, model_id, count(*) AS n FROM generations
  WHERE status = 'queued' AND lease_until IS NOT NULL AND lease_until >= now() GROUP BY account_id, model_id
), heads AS (
  -- a pair's first runnable jobs, as many as the batch wants
  SELECT h.* FROM pairs p, LATERAL (
    SELECT id, account_id, model_id, run_after FROM generations
    WHERE status = 'queued' AND account_id = p.account_id AND model_id = p.model_id
      AND run_after <= now() AND (lease_until IS NULL OR lease_until < now())
    ORDER BY run_after, id LIMIT ${wanted}) h
), open AS (
  -- the heads of models below their limit (as this snapshot counts), numbered within their account
  SELECT h.*, ($1::jsonb ->> h.model_id)::int AS model_limit,
    row_number() OVER account AS nth, first_value(h.run_after) OVER account AS first_run_after, first_value(h.id) OVER account AS first_id
  FROM heads h
  WHERE coalesce(($1::jsonb ->> h.model_id)::int, 2147483647)
        > (SELECT coalesce(sum(n), 0) FROM running r WHERE r.model_id = h.model_id)
  WINDOW account AS (PARTITION BY h.account_id ORDER BY h.run_after, h.id)
), accounts AS (
  SELECT a.account_id,
    (SELECT coalesce(sum(n), 0) FROM running r WHERE r.account_id = a.account_id) AS running,
    (SELECT max(started_at) FROM generations s WHERE s.account_id = a.account_id AND s.started_at IS NOT NULL) AS served
  FROM (SELECT DISTINCT account_id FROM open) a
), ranked AS (
  -- The order single claims would take these jobs in, each counting the ones before it as running and
  -- as just served. running + nth: the account's running renders once this job starts; then nth: of
  -- accounts at that count, one served earlier in this batch goes after one served later or not yet;
  -- then the account's last start before this batch, and its first job here (which placed it among
  -- the accounts it ties with for the rest of the batch).
  SELECT o.id, o.account_id, o.model_id, o.model_limit,
    row_number() OVER (ORDER BY a.running + o.nth, o.nth, a.served NULLS FIRST, o.first_run_after, o.first_id) AS rank
  FROM open o JOIN accounts a USING (account_id)
  WHERE a.running + o.nth <= $4::int  -- the per-account limit (account-limit.ts)
), first_limited AS (
  SELECT min(rank) AS rank FROM ranked WHERE model_limit IS NOT NULL
), unlimited AS (
  -- the jobs ranked before the first of a limited model, best first
  SELECT array_agg(id ORDER BY rank) AS ids FROM ranked
  WHERE rank < coalesce((SELECT rank FROM first_limited), 9223372036854775807)
), chosen AS (
  -- Locked best first, passing over rows another claimer holds. The runnable test is repeated here
  -- because a row claimed by another worker since this statement's snapshot is rechecked, in its new
  -- version, against these conditions only.
  SELECT g.id, array_position(u.ids, g.id) AS rank FROM unlimited u, generations g
  WHERE g.id = ANY (u.ids)
    AND g.status = 'queued' AND g.run_after <= now() AND (g.lease_until IS NULL OR g.lease_until < now())
  ORDER BY 2 LIMIT ${wanted}
  FOR UPDATE OF g SKIP LOCKED
), claimed AS (
  UPDATE generations g SET ${lease('$2', '$3')} FROM chosen c WHERE g.id = c.id
  RETURNING c.rank, g.id, g.account_id, g.model_id, g.inputs, g.attempts, extract(epoch FROM now() - g.run_after)::float8 AS waited
)
SELECT id, account_id, model_id, inputs, attempts, waited, false AS limited, rank,
  (SELECT coalesce(sum(n), 0)::int FROM running r WHERE r.account_id = claimed.account_id) AS account_running
FROM claimed
UNION ALL
SELECT id, NULL, model_id, NULL, NULL, NULL, true, rank, NULL FROM ranked
WHERE rank = (SELECT rank FROM first_limited) AND (SELECT count(*) FROM claimed) < ${wanted}
ORDER BY limited, rank`;
}

// One job by id ($1), if it is still runnable and no other claimer holds it; $2 owner, $3 lease seconds,
// $4 the server of its model's pool it is given (pool-claim.ts), null for a model without a pool.
const CLAIM_ONE = `
UPDATE generations SET ${lease('$2', '$3')}, backend_url = $4
WHERE id = (SELECT id FROM generations WHERE id = $1 AND status = 'queued' AND run_after <= now()
              AND (lease_until IS NULL OR lease_until < now()) FOR UPDATE SKIP LOCKED)
RETURNING id, account_id, model_id, inputs, attempts, backend_url, extract(epoch FROM now() - run_after)::float8 AS waited`;

const RUNNING_OF_MODEL = `
SELECT count(*)::int AS n FROM generations WHERE model_id = $1 AND status = 'queued' AND lease_until IS NOT NULL AND lease_until >= now()`;

// The most one statement claims: each count is a prepared statement of its own on every connection.
const MAX_BATCH = 16;

interface BatchRow extends ClaimedRow { limited: boolean; rank: number }

export class Claimer {
  private limitsJson: string;
  private batchSql = new Map<number, string>();
  /** Pool servers by when this claimer last gave one a render (pool-claim.ts pickServer's tie-break). */
  private lastServed = new Map<string, number>();
  private served = 0;

  /** `accountLimit`: renders of one account running at once, cluster-wide (null: no limit). */
  constructor(private db: Db, private limits: Map<string, number>, private owner: string, private leaseSeconds: number,
    private accountLimit: number | null = null, private pools: Map<string, PoolState> = new Map()) {
    this.limitsJson = JSON.stringify(Object.fromEntries(limits));
  }

  /** The model limits of this claim: a pooled model is limited to what its healthy servers take (0 while none is). */
  private currentLimits(): string {
    if (this.pools.size === 0) return this.limitsJson;
    const limits = Object.fromEntries(this.limits);
    for (const [model, pool] of this.pools) limits[model] = Math.min(poolCapacity(pool), this.limits.get(model) ?? Infinity);
    return JSON.stringify(limits);
  }

  /** The next job in fairness order, or null when nothing is runnable. */
  async next(): Promise<ClaimedJob | null> {
    return (await this.claim(1))[0] ?? null;
  }

  /** Up to `wanted` jobs, in fairness order; fewer (or none) when fewer are runnable. */
  async claim(wanted: number): Promise<ClaimedJob[]> {
    const jobs: ClaimedJob[] = [];
    // Each round claims what it can up to the first job of a limited model, then that job under its
    // model's lock. The bound only stops a pathological loop; a round normally makes progress or ends it.
    for (let round = 0; jobs.length < wanted && round <= wanted; round++) {
      const asked = Math.min(wanted - jobs.length, MAX_BATCH);
      const { claimed, limited } = await this.claimBatch(asked);
      const taken = [...claimed];
      if (limited) {
        const job = await this.claimLimited(limited.id, limited.model_id);
        if (job) taken.push(job);
      }
      // Checked with a fresh count: a render starts only while its account is within its limit.
      const { keep, handedBack } = this.accountLimit === null ? { keep: taken, handedBack: [] }
        : await enforceAccountLimit(this.db, taken, this.accountLimit);
      jobs.push(...keep);
      if (handedBack.length > 0) break; // raced another claimer: the next round (a second away) tries again
      if (!limited && claimed.length < asked) break; // nothing more is runnable
    }
    return jobs;
  }

  private async claimBatch(wanted: number): Promise<{ claimed: ClaimedJob[]; limited: BatchRow | null }> {
    let text = this.batchSql.get(wanted);
    if (!text) this.batchSql.set(wanted, text = claimBatchSql(wanted));
    const { rows } = await this.db.query<BatchRow>({
      name: `claim-batch-${wanted}`, text, values: [this.currentLimits(), this.owner, this.leaseSeconds, this.accountLimit ?? 2147483647],
    });
    const limited = rows.find((r) => r.limited) ?? null;
    return { claimed: rows.filter((r) => !r.limited).map(({ limited: _l, rank: _r, ...job }) => this.leased(job)), limited };
  }

  private leased(row: ClaimedRow): ClaimedJob {
    return { ...row, lease: { owner: this.owner, attempt: row.attempts } };
  }

  private async claimLimited(id: string, modelId: string): Promise<ClaimedJob | null> {
    const tx = await this.db.connect();
    try {
      await tx.query('BEGIN');
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`model:${modelId}`]);
      // Counted after the lock, in a snapshot that sees every claim of this model committed before it.
      const limit = this.limits.get(modelId);
      const pool = this.pools.get(modelId);
      let job: ClaimedJob | null = null;
      // A pooled model without a model-wide limit is bounded by its servers alone (counted in claimOnServer).
      const below = limit === undefined
        || (await tx.query({ name: 'claim-model-running', text: RUNNING_OF_MODEL, values: [modelId] })).rows[0].n < limit;
      if (below && pool) job = await this.claimOnServer(tx, id, modelId, pool);
      else if (below) {
        job = await this.claimOne(tx, id, null);
      }
      await tx.query('COMMIT');
      return job;
    } catch (e) {
      await tx.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      tx.release();
    }
  }

  /** Claims job `id` on the least busy healthy server of its pool, if one has room (under the model's lock). */
  private async claimOnServer(tx: Tx, id: string, modelId: string, pool: PoolState): Promise<ClaimedJob | null> {
    const running = await tx.query({ name: 'claim-running-per-url', text: RUNNING_PER_URL, values: [modelId] });
    const url = pickServer(pool, running.rows, this.lastServed);
    if (!url) return null;
    const job = await this.claimOne(tx, id, url);
    if (job) this.lastServed.set(url, this.served++);
    return job;
  }

  private async claimOne(tx: Tx, id: string, url: string | null): Promise<ClaimedJob | null> {
    const claimed = await tx.query<ClaimedRow>({ name: 'claim-one', text: CLAIM_ONE, values: [id, this.owner, this.leaseSeconds, url] });
    return claimed.rows[0] ? this.leased(claimed.rows[0]) : null;
  }
}
