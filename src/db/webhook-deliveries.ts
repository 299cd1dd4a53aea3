// The statements on `webhook_deliveries` (migrations/009, 012 and 020): the outbox the trigger writes and
// webhooks/dispatcher.ts delivers.
import type { Queryable } from './pool.ts';

export interface ClaimedDelivery {
  id: string;
  type: string;
  snapshot: Record<string, unknown>;
  attempts: number;
  created_at: Date;
  endpoint_id: string;
  account_id: string;
  url: string;
  secret: string;
  live: boolean;
}

// Fair claims: due deliveries of endpoints that are not paused, at most `perEndpoint` attempts in
// flight per endpoint and `perAccount` per account (counted over every dispatcher of the cluster by
// the leases they hold), taken round robin over accounts (every account's first, then every account's
// second, ...), so one account's backlog never queues another's deliveries behind it. Only endpoints
// with room are read (not paused, under their cap, of an account under its cap), each up to its room
// (an index range scan that stops there): the backlog of a full account, a busy or a paused endpoint
// is never read, and picked rows are locked and leased by key, so another account's backlog adds no
// reads to a claim. The rows picked are locked with SKIP LOCKED: a row another dispatcher is claiming
// right now is left to it.
const CLAIM_SQL = `
WITH ep AS (
  -- every endpoint with its attempts in flight: the leases it holds, found by migrations/020's index
  -- (OFFSET 0 keeps the status test out of that lookup, so no index of the pending backlog serves it)
  SELECT e.id, e.account_id, e.paused_until, e.enabled, e.deleted_at, b.n
  FROM webhook_endpoints e CROSS JOIN LATERAL (
    SELECT count(*) AS n FROM (
      SELECT x.status FROM webhook_deliveries x WHERE x.endpoint_id = e.id AND x.lease_until >= now() OFFSET 0
    ) l WHERE l.status = 'pending'
  ) b
), account_busy AS (
  SELECT ep.account_id, sum(ep.n) AS n FROM ep GROUP BY ep.account_id
), open AS (
  SELECT ep.id, ep.account_id, $4 - ep.n AS room
  FROM ep JOIN account_busy ab ON ab.account_id = ep.account_id
  WHERE (ep.paused_until IS NULL OR ep.paused_until <= now() OR NOT ep.enabled OR ep.deleted_at IS NOT NULL)
    AND ep.n < $4 AND ab.n < $5
), due AS (
  SELECT d.id, o.account_id, d.next_attempt_at
  FROM open o
  CROSS JOIN LATERAL (
    SELECT x.id, x.next_attempt_at FROM webhook_deliveries x
    WHERE x.endpoint_id = o.id AND x.status = 'pending' AND x.next_attempt_at <= now()
      AND (x.lease_until IS NULL OR x.lease_until < now())
    ORDER BY x.next_attempt_at, x.id LIMIT o.room
  ) d
), picked AS (
  SELECT c.id FROM (
    SELECT due.*, row_number() OVER (PARTITION BY due.account_id ORDER BY due.next_attempt_at, due.id) AS account_rank
    FROM due
  ) c JOIN account_busy ab ON ab.account_id = c.account_id
  WHERE c.account_rank <= $5 - ab.n
  ORDER BY c.account_rank, c.next_attempt_at LIMIT $2
), locked AS (
  -- each picked row by its key alone (OFFSET 0 keeps its state tests out of the lookup, so that no
  -- index of the pending backlog can serve it), its state tested once it is locked
  SELECT l.id FROM picked p CROSS JOIN LATERAL (
    SELECT d.id, d.status, d.lease_until FROM webhook_deliveries d WHERE d.id = p.id OFFSET 0
    FOR UPDATE SKIP LOCKED
  ) l
  WHERE l.status = 'pending' AND (l.lease_until IS NULL OR l.lease_until < now())
), taken AS (
  UPDATE webhook_deliveries d SET lease_owner = $1, lease_until = now() + make_interval(secs => $3)
  WHERE d.id = ANY (ARRAY(SELECT id FROM locked))
  RETURNING d.id, d.type, d.snapshot, d.attempts, d.created_at, d.endpoint_id
)
SELECT t.*, e.account_id, e.url, e.secret, (e.enabled AND e.deleted_at IS NULL) AS live
FROM taken t JOIN webhook_endpoints e ON e.id = t.endpoint_id`;

export async function claimDeliveries(
  db: Queryable,
  o: {
    owner: string;
    max: number;
    leaseSeconds: number;
    perEndpoint: number;
    perAccount: number;
  },
): Promise<ClaimedDelivery[]> {
  const { rows } = await db.query<ClaimedDelivery>({
    name: 'webhook-claim-fair',
    text: CLAIM_SQL,
    values: [o.owner, o.max, o.leaseSeconds, o.perEndpoint, o.perAccount],
  });
  return rows;
}

/** What an attempt says of its endpoint: whether it succeeded, and when failures pause it. */
export interface EndpointOutcome {
  endpointId: string;
  ok: boolean;
  pauseAfter: number;
  pauseSeconds: number;
  maxPauseSeconds: number;
}

// One statement per attempt, not two: the attempt's result, only while the owner still holds the
// delivery at the attempt it claimed, and, whatever that fence says, the endpoint's outcome (a success
// clears the failures in a row, writing only when there were some; the `pauseAfter`-th failure in a
// row and each one after pause the endpoint for 2^(failures - pauseAfter) × `pauseSeconds`, at most
// `maxPauseSeconds`). No outcome: $9 is null. Both updates run whether or not the SELECT reads them.
const RECORD_SQL = `
WITH attempt AS (
  UPDATE webhook_deliveries SET status = $3, last_response_status = coalesce($4, last_response_status),
    last_error = coalesce($8, last_error), attempts = $5,
    next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + make_interval(secs => $6) END,
    lease_owner = NULL, lease_until = NULL
  WHERE id = $1 AND lease_owner = $2 AND attempts = $7
  RETURNING id
), outcome AS (
  UPDATE webhook_endpoints SET
    failures_in_row = CASE WHEN $10 THEN 0 ELSE failures_in_row + 1 END,
    paused_until = CASE WHEN NOT $10 AND failures_in_row + 1 >= $11 THEN now() + make_interval(secs =>
      least($13::float8, $12::float8 * power(2, least(20, failures_in_row + 1 - $11)))) END
  WHERE id = $9 AND (NOT $10 OR failures_in_row <> 0 OR paused_until IS NOT NULL)
  RETURNING id
)
SELECT (SELECT count(*) FROM attempt)::int AS recorded`;

/**
 * An attempt's result, only while `owner` still holds the delivery at the attempt it claimed, with
 * its endpoint's outcome (`endpoint`, recorded whatever the fence says), in one statement.
 */
export async function recordAttempt(
  db: Queryable,
  o: {
    id: string;
    owner: string;
    claimedAttempts: number;
    status: 'pending' | 'delivered' | 'failed';
    response: number | null;
    error: string | null;
    attempts: number;
    retryInSeconds?: number;
    endpoint?: EndpointOutcome;
  },
): Promise<void> {
  const e = o.endpoint;
  await db.query({
    name: 'webhook-record-attempt-outcome',
    text: RECORD_SQL,
    values: [
      o.id,
      o.owner,
      o.status,
      o.response,
      o.attempts,
      o.retryInSeconds ?? 0,
      o.claimedAttempts,
      o.error,
      e?.endpointId ?? null,
      e?.ok ?? false,
      e?.pauseAfter ?? 0,
      e?.pauseSeconds ?? 0,
      e?.maxPauseSeconds ?? 0,
    ],
  });
}

export async function deliveriesOf(
  q: Queryable,
  endpointId: string,
  after: string | null,
  limit: number,
) {
  const { rows } = await q.query(
    `SELECT id, event_id, type, generation_id, attempts, status, last_response_status, last_error, created_at,
            next_attempt_at
     FROM webhook_deliveries WHERE endpoint_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
    [endpointId, after, limit],
  );
  return rows as Array<{
    id: string;
    event_id: string;
    type: string;
    generation_id: string;
    attempts: number;
    status: string;
    last_response_status: number | null;
    last_error: string | null;
    created_at: Date;
    next_attempt_at: Date | null;
  }>;
}

/** Deliveries finished over 30 days ago (kept for the deliveries list until then), 5,000 a call. */
export async function pruneDeliveries(q: Queryable): Promise<void> {
  await q.query(
    `DELETE FROM webhook_deliveries WHERE ctid = ANY(ARRAY(SELECT ctid FROM webhook_deliveries
       WHERE status <> 'pending' AND created_at < now() - interval '30 days' LIMIT 5000))`,
  );
}
