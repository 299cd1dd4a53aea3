// The statements that claim renders (queue/claim.ts explains the fairness and the limits): the
// batch claim, the claim of one job under its model's lock (the SQL function of
// sql/claim_limited.sql), and the count of an account's running renders after a claim.
import type { Queryable } from './pool.ts';
import type { StoredMessage } from './generation-messages.ts';

// A chat request's conversation (migrations/016), claimed with its render: the render needs it before
// it can start, and a read of its own would be one more round trip between the claim and the backend.
// Its output format (migrations/034) beside it.
const MESSAGES = (id: string) =>
  `(SELECT m.messages FROM generation_messages m WHERE m.generation_id = ${id}) AS messages,
  (SELECT m.response_format FROM generation_messages m WHERE m.generation_id = ${id})
    AS response_format`;

// The lease a claim takes; `owner` and `seconds` are the statement's parameters for them.
const lease = (owner: string, seconds: string) => `attempts = attempts + 1, lease_owner = ${owner},
  lease_until = now() + make_interval(secs => ${seconds}), started_at = coalesce(started_at, clock_timestamp())`;

/**
 * Claims up to `wanted` jobs: $1 model limits (jsonb {model: limit}), $2 owner, $3 lease seconds,
 * $4 the per-account limit (account-limit.ts: jobs that would take their account past it, as this
 * snapshot counts, are left out). Returns the claimed jobs in rank order (limited = false), then,
 * when fewer than `wanted` were claimed because a job of a limited model came first, that job, not
 * claimed (limited = true), with `more`: whether any job ranked after it (false: once it is claimed,
 * nothing else was runnable as this snapshot saw the queue, and no second statement need ask).
 *
 * `wanted` is written into the text, not passed, so that every count has its own prepared statement
 * with one plan: PostgreSQL then keeps the generic plan (planning this statement costs more than
 * running it), and, knowing how few rows each step yields, locks the chosen rows by primary key
 * instead of scanning the queue.
 */
export function claimBatchSql(wanted: number): string {
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
  RETURNING c.rank, g.id, g.account_id, g.model_id, g.inputs, g.attempts, g.trace_parent,
    extract(epoch FROM now() - g.run_after)::float8 AS waited, ${MESSAGES('g.id')}
)
SELECT id, account_id, model_id, inputs, attempts, waited, trace_parent, messages, response_format,
  false AS limited, rank,
  (SELECT coalesce(sum(n), 0)::int FROM running r WHERE r.account_id = claimed.account_id) AS account_running,
  NULL::boolean AS more
FROM claimed
UNION ALL
SELECT id, NULL, model_id, NULL, NULL, NULL, NULL, NULL, NULL, true, rank, NULL,
  EXISTS (SELECT 1 FROM ranked r WHERE r.rank > l.rank) FROM ranked l
WHERE rank = (SELECT rank FROM first_limited) AND (SELECT count(*) FROM claimed) < ${wanted}
ORDER BY limited, rank`;
}

/** Running renders of the given accounts, counted after the claim's commit. */
const RUNNING_OF_ACCOUNTS = `
SELECT account_id, count(*)::int AS n FROM generations
WHERE account_id = ANY($1) AND status = 'queued' AND lease_until IS NOT NULL AND lease_until >= now()
GROUP BY account_id`;

export async function runningOfAccounts(
  q: Queryable,
  accounts: string[],
): Promise<Array<{ account_id: string; n: number }>> {
  const { rows } = await q.query<{ account_id: string; n: number }>({
    name: 'account-running',
    text: RUNNING_OF_ACCOUNTS,
    values: [accounts],
  });
  return rows;
}

/** A claimed row (the queue adds the lease it took: queue/types.ts ClaimedJob). */
export interface ClaimRow {
  id: string;
  account_id: string;
  model_id: string;
  inputs: Record<string, string | number | boolean>;
  attempts: number;
  waited: number;
  /**
   * The account's running renders as the claim's snapshot counted them; absent when not counted.
   */
  account_running?: number | null;
  /**
   * The pool server the render was given (queue/pool-claim.ts); absent for models without a pool.
   */
  backend_url?: string | null;
  /** The W3C traceparent of the create (migrations/018): the worker's spans continue its trace. */
  trace_parent?: string | null;
  /** A chat request's conversation (db/generation-messages.ts); null when it was not made from one. */
  messages?: StoredMessage[] | null;
  /** Its output format for a chat server (migrations/034); null for text. */
  response_format?: Record<string, unknown> | null;
}

export interface BatchRow extends ClaimRow {
  limited: boolean;
  rank: number;
  /** A limited row's: jobs were ranked after it (null on a claimed row). */
  more: boolean | null;
}

const batchSql = new Map<number, string>();

export interface BatchClaim {
  limitsJson: string;
  owner: string;
  leaseSeconds: number;
  accountLimit: number;
}

/** The batch claim of up to `wanted` jobs (see claimBatchSql). */
export async function claimBatch(q: Queryable, wanted: number, c: BatchClaim): Promise<BatchRow[]> {
  let text = batchSql.get(wanted);
  if (!text) batchSql.set(wanted, (text = claimBatchSql(wanted)));
  const { rows } = await q.query<BatchRow>({
    name: `claim-batch-${wanted}`,
    text,
    values: [c.limitsJson, c.owner, c.leaseSeconds, c.accountLimit],
  });
  return rows;
}

/** The claim of one job of a limited or pooled model (sql/claim_limited.sql). */
export interface LimitedClaim {
  id: string;
  modelId: string;
  /** The model's limit, cluster-wide; null: none. */
  limit: number | null;
  /** The pool's healthy servers, in the claimer's order of preference; null: no pool. */
  urls: string[] | null;
  perUrl: number;
  owner: string;
  leaseSeconds: number;
  /** Only if no other job is runnable (a job this process just queued, claimed directly). */
  alone?: boolean;
}

/**
 * Claims job `id` under its model's lock, below the model's limit and on the least busy server of
 * its pool, in one round trip; null when it cannot be claimed now.
 */
export async function claimLimited(q: Queryable, c: LimitedClaim): Promise<ClaimRow | null> {
  const { rows } = await q.query<ClaimRow>({
    name: 'claim-limited',
    text: 'SELECT * FROM rendergate_claim_limited($1, $2, $3, $4, $5, $6, $7, $8)',
    values: [c.id, c.modelId, c.limit, c.urls, c.perUrl, c.owner, c.leaseSeconds, !!c.alone],
  });
  return rows[0] ?? null;
}
