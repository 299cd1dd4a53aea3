// The statements on `webhook_deliveries` (migrations/009): the outbox the trigger writes and
// webhooks/dispatcher.ts delivers.
import type { Queryable } from './pool.ts';

export interface ClaimedDelivery {
  id: string; type: string; snapshot: Record<string, unknown>; attempts: number; created_at: Date;
  endpoint_id: string; url: string; secret: string; live: boolean;
}

const CLAIM = `
WITH due AS (
  SELECT id FROM webhook_deliveries
  WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
  ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED
), taken AS (
  UPDATE webhook_deliveries d SET lease_owner = $1, lease_until = now() + make_interval(secs => $3)
  FROM due WHERE d.id = due.id
  RETURNING d.id, d.type, d.snapshot, d.attempts, d.created_at, d.endpoint_id
)
SELECT t.*, e.url, e.secret, (e.enabled AND e.deleted_at IS NULL) AS live
FROM taken t JOIN webhook_endpoints e ON e.id = t.endpoint_id`;

/** Up to `count` due deliveries, leased to `owner` for `leaseSeconds`. */
export async function claimDeliveries(q: Queryable, owner: string, count: number, leaseSeconds: number):
  Promise<ClaimedDelivery[]> {
  const { rows } = await q.query<ClaimedDelivery>({ name: 'webhook-claim', text: CLAIM, values: [owner, count, leaseSeconds] });
  return rows;
}

export interface AttemptResult {
  id: string; owner: string; status: 'pending' | 'delivered' | 'failed'; response: number | null;
  attempts: number; retryIn: number; claimedAttempts: number;
}

/** An attempt's result, only while `owner` still holds the delivery at the attempt it claimed. */
export async function recordAttempt(q: Queryable, r: AttemptResult): Promise<void> {
  await q.query({
    name: 'webhook-record',
    text: `UPDATE webhook_deliveries SET status = $3, last_response_status = coalesce($4, last_response_status),
             attempts = $5, next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + make_interval(secs => $6) END,
             lease_owner = NULL, lease_until = NULL
           WHERE id = $1 AND lease_owner = $2 AND attempts = $7`,
    values: [r.id, r.owner, r.status, r.response, r.attempts, r.retryIn, r.claimedAttempts],
  });
}

export async function deliveriesOf(q: Queryable, endpointId: string, after: string | null, limit: number) {
  const { rows } = await q.query(
    `SELECT id, event_id, type, generation_id, attempts, status, last_response_status, created_at, next_attempt_at
     FROM webhook_deliveries WHERE endpoint_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
    [endpointId, after, limit]);
  return rows as Array<{
    id: string; event_id: string; type: string; generation_id: string; attempts: number; status: string;
    last_response_status: number | null; created_at: Date; next_attempt_at: Date | null;
  }>;
}

/** Deliveries finished over 30 days ago (kept for the deliveries list until then), 5,000 a call. */
export async function pruneDeliveries(q: Queryable): Promise<void> {
  await q.query(
    `DELETE FROM webhook_deliveries WHERE ctid = ANY(ARRAY(SELECT ctid FROM webhook_deliveries
       WHERE status <> 'pending' AND created_at < now() - interval '30 days' LIMIT 5000))`);
}
