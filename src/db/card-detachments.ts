// Cards to detach at Stripe (migrations/042): a row is written in the transaction that forgets a
// card (Remove card, or a new card saved over it), and marked once Stripe has detached it. A call
// is leased by `attempted_at`: the next one waits a minute times the attempts made (at most an
// hour), so a Stripe that keeps failing is asked less and less often, and two processes never call
// for the same card at once.
import type { Queryable, Tx } from './pool.ts';

export interface Detachment {
  paymentMethod: string;
  accountId: string;
  customerId: string;
  attempts: number;
  detachedAt: Date | null;
  lastError: string | null;
}

interface DbRow {
  payment_method: string;
  account_id: string;
  customer_id: string;
  attempts: number;
  detached_at: Date | null;
  last_error: string | null;
}

const view = (r: DbRow): Detachment => ({
  paymentMethod: r.payment_method,
  accountId: r.account_id,
  customerId: r.customer_id,
  attempts: r.attempts,
  detachedAt: r.detached_at,
  lastError: r.last_error,
});

/**
 * When a row may be called for: never tried, or its pause since the last try is over, and no
 * recharge in flight pays with the card (a card replaced by a new one during a recharge: the
 * recharge's call may be made again, and must find the card as it was).
 */
const DUE = `detached_at IS NULL AND (attempted_at IS NULL
  OR attempted_at < now() - least(interval '1 hour', interval '1 minute' * attempts))
  AND NOT EXISTS (SELECT 1 FROM auto_recharges r
                   WHERE r.account_id = card_detachments.account_id
                     AND r.status = 'pending'
                     AND r.payment_method = card_detachments.payment_method)`;

/** The card `paymentMethod` of the account's customer is to be detached (once per card). */
export async function queueDetach(
  tx: Tx,
  d: { paymentMethod: string; accountId: string; customerId: string },
): Promise<void> {
  await tx.query(
    `INSERT INTO card_detachments (payment_method, account_id, customer_id) VALUES ($1, $2, $3)
     ON CONFLICT (payment_method) DO NOTHING`,
    [d.paymentMethod, d.accountId, d.customerId],
  );
}

/** Takes the call for `paymentMethod` if it is due; null when it is done or another has it. */
export async function leaseDetach(q: Queryable, paymentMethod: string): Promise<Detachment | null> {
  const { rows } = await q.query<DbRow>(
    `UPDATE card_detachments SET attempted_at = now(), attempts = attempts + 1
      WHERE payment_method = $1 AND ${DUE} RETURNING *`,
    [paymentMethod],
  );
  return rows[0] ? view(rows[0]) : null;
}

/** Cards whose detachment is due now, oldest first. */
export async function dueDetaches(q: Queryable, limit: number): Promise<string[]> {
  const { rows } = await q.query<{ payment_method: string }>(
    `SELECT payment_method FROM card_detachments WHERE ${DUE} ORDER BY created_at LIMIT $1`,
    [limit],
  );
  return rows.map((r) => r.payment_method);
}

export async function markDetached(q: Queryable, paymentMethod: string): Promise<void> {
  await q.query(
    `UPDATE card_detachments SET detached_at = now(), last_error = NULL
      WHERE payment_method = $1 AND detached_at IS NULL`,
    [paymentMethod],
  );
}

export async function noteDetachError(q: Queryable, paymentMethod: string, error: string) {
  await q.query('UPDATE card_detachments SET last_error = $2 WHERE payment_method = $1', [
    paymentMethod,
    error.slice(0, 500),
  ]);
}

export async function detachmentOf(
  q: Queryable,
  paymentMethod: string,
): Promise<Detachment | null> {
  const { rows } = await q.query<DbRow>(
    'SELECT * FROM card_detachments WHERE payment_method = $1',
    [paymentMethod],
  );
  return rows[0] ? view(rows[0]) : null;
}
