// Resend of a webhook delivery: the same delivery (the same webhook-id, so a receiver that already
// handled it can tell) is due again now, for one more attempt. A delivery a worker holds right now is
// left alone (its lease fences the worker's write; clearing it could let two attempts run at once).
import type { Queryable } from './pool.ts';
import { WEBHOOKS_CHANNEL } from './channels.ts';

export type ResendOutcome = 'queued' | 'in-flight' | 'not-found';

export async function resendDelivery(
  db: Queryable,
  accountId: string,
  deliveryId: string,
): Promise<ResendOutcome> {
  const { rows } = await db.query(
    `WITH target AS (
       SELECT d.id, (d.lease_until IS NOT NULL AND d.lease_until >= now()) AS held
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
       WHERE d.id = $1 AND e.account_id = $2 AND e.deleted_at IS NULL
     ), moved AS (
       UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = now(), lease_owner = NULL, lease_until = NULL
       FROM target t WHERE d.id = t.id AND NOT t.held
       RETURNING d.id
     )
     SELECT (SELECT held FROM target) AS held, (SELECT count(*)::int FROM moved) AS moved`,
    [deliveryId, accountId],
  );
  const r = rows[0] as { held: boolean | null; moved: number };
  if (r.held === null) return 'not-found';
  if (r.moved === 0) return 'in-flight';
  await db.query(`SELECT pg_notify('${WEBHOOKS_CHANNEL}', '')`);
  return 'queued';
}
