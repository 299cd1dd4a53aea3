// SQL of stripe_payments and stripe_disputes (migrations/024): what Stripe's events said of a
// payment (a PaymentIntent), kept whether or not its top-up has been credited yet, so an event
// that comes early is applied when the credit lands. Every value only grows (the largest refund
// seen) or turns true (a dispute's funds withdrawn, then reinstated): the same events in any order
// leave the same rows.
import type { Tx } from './pool.ts';

/**
 * Locks the payment's row, making it if new, and raises its refunded amount to `refundedCents`
 * when that is more (charge.refunded carries the cumulative amount). Every event about a payment
 * takes this lock first, so they apply one at a time. Returns the largest refunded amount seen,
 * and whether this one was larger than all before it.
 */
export async function lockPayment(
  tx: Tx,
  paymentIntent: string,
  refundedCents = 0,
): Promise<{ refundedCents: number; raised: boolean }> {
  // The row as it is now, locked (an update of the latest version: a parallel event's commit is
  // seen), or made with this amount.
  const { rows } = await tx.query<{ refunded_cents: number; made: boolean }>(
    `INSERT INTO stripe_payments AS p (payment_intent, refunded_cents) VALUES ($1, $2)
     ON CONFLICT (payment_intent) DO UPDATE SET updated_at = now()
     RETURNING refunded_cents, xmax = 0 AS made`,
    [paymentIntent, refundedCents],
  );
  const r = rows[0];
  if (r.made) return { refundedCents, raised: refundedCents > 0 };
  if (refundedCents <= r.refunded_cents) return { refundedCents: r.refunded_cents, raised: false };
  await tx.query('UPDATE stripe_payments SET refunded_cents = $2 WHERE payment_intent = $1', [
    paymentIntent,
    refundedCents,
  ]);
  return { refundedCents, raised: true };
}

export interface DisputeNews {
  disputeId: string;
  paymentIntent: string;
  amountCents: number;
  /** The event shows the funds were taken (a chargeback, not an inquiry). */
  withdrawn: boolean;
  /** The event shows they came back (won, or funds_reinstated). */
  reinstated: boolean;
}

/**
 * Adds what one dispute event says to the dispute's row (under its payment's lock, so the row read
 * first is the current one): the flags only turn true, the amount is the largest seen, the payment
 * it belongs to is the first one named. Returns whether the event said anything new.
 */
export async function noteDispute(tx: Tx, d: DisputeNews): Promise<boolean> {
  const { rows } = await tx.query<{
    amount_cents: number;
    withdrawn: boolean;
    reinstated: boolean;
  }>('SELECT amount_cents, withdrawn, reinstated FROM stripe_disputes WHERE dispute_id = $1', [
    d.disputeId,
  ]);
  const was = rows[0];
  const news =
    !was ||
    d.amountCents > was.amount_cents ||
    (d.withdrawn && !was.withdrawn) ||
    (d.reinstated && !was.reinstated);
  if (!news) return false;
  await tx.query(
    `INSERT INTO stripe_disputes AS d
       (dispute_id, payment_intent, amount_cents, withdrawn, reinstated)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (dispute_id) DO UPDATE
       SET amount_cents = greatest(d.amount_cents, EXCLUDED.amount_cents),
           withdrawn = d.withdrawn OR EXCLUDED.withdrawn,
           reinstated = d.reinstated OR EXCLUDED.reinstated,
           updated_at = now()`,
    [d.disputeId, d.paymentIntent, d.amountCents, d.withdrawn, d.reinstated],
  );
  return true;
}

/** The amounts of the payment's disputes whose funds are withdrawn and not reinstated. */
export async function openDisputes(tx: Tx, paymentIntent: string): Promise<number[]> {
  const { rows } = await tx.query<{ amount_cents: number }>(
    `SELECT amount_cents FROM stripe_disputes
     WHERE payment_intent = $1 AND withdrawn AND NOT reinstated`,
    [paymentIntent],
  );
  return rows.map((r) => r.amount_cents);
}
