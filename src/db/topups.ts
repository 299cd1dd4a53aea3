// Paid Checkout Sessions (migrations/014): one row per session, which is what credits it once.
import type { Queryable, Tx } from './pool.ts';
import { GENERATION_CHANGED_CHANNEL } from './channels.ts';

export interface TopupRow {
  sessionId: string;
  accountId: string;
  amountCents: number;
  paymentIntent: string | null;
  creditEntryId: string;
  refundedCents: number;
  disputedCents: number;
  createdAt: Date;
}

interface TopupDbRow {
  session_id: string;
  account_id: string;
  amount_cents: number;
  payment_intent: string | null;
  credit_entry_id: string;
  refunded_cents: number;
  disputed_cents: number;
  created_at: Date;
}

const view = (r: TopupDbRow): TopupRow => ({
  sessionId: r.session_id,
  accountId: r.account_id,
  amountCents: r.amount_cents,
  paymentIntent: r.payment_intent,
  creditEntryId: r.credit_entry_id,
  refundedCents: r.refunded_cents,
  disputedCents: r.disputed_cents,
  createdAt: r.created_at,
});

/**
 * Records the session as paid; false when it already was. A concurrent insert of the same session waits
 * for the first one's transaction and then does nothing, so 20 deliveries at once credit once.
 */
export async function insertTopup(
  tx: Tx,
  t: {
    sessionId: string;
    accountId: string;
    amountCents: number;
    paymentIntent: string | null;
    creditEntryId: string;
  },
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO topups (session_id, account_id, amount_cents, payment_intent, credit_entry_id)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
    [t.sessionId, t.accountId, t.amountCents, t.paymentIntent, t.creditEntryId],
  );
  return rowCount === 1;
}

/** The top-up paid by this PaymentIntent, locked for a reversal; null when none of ours. */
export async function lockTopupByPayment(tx: Tx, paymentIntent: string): Promise<TopupRow | null> {
  const { rows } = await tx.query<TopupDbRow>(
    'SELECT * FROM topups WHERE payment_intent = $1 FOR UPDATE',
    [paymentIntent],
  );
  return rows[0] ? view(rows[0]) : null;
}

/** Raises what reversals took back of a top-up (the CHECK keeps it within what was paid). */
export async function setReversed(
  tx: Tx,
  sessionId: string,
  r: { refundedCents: number; disputedCents: number },
) {
  await tx.query(
    'UPDATE topups SET refunded_cents = $2, disputed_cents = $3 WHERE session_id = $1',
    [sessionId, r.refundedCents, r.disputedCents],
  );
}

/** The account's top-up of this session, once credited; null before (or when it is another's). */
export async function topupOf(
  db: Queryable,
  accountId: string,
  sessionId: string,
): Promise<TopupRow | null> {
  const { rows } = await db.query<TopupDbRow>(
    'SELECT * FROM topups WHERE session_id = $1 AND account_id = $2',
    [sessionId, accountId],
  );
  return rows[0] ? view(rows[0]) : null;
}

/**
 * The change notification that `Prefer: wait` listens to (migrations/005), with `topup:<session>`
 * for payload: a success page waiting for this session is woken when the credit commits.
 */
export async function notifyTopup(tx: Tx, sessionId: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [GENERATION_CHANGED_CHANNEL, `topup:${sessionId}`]);
}

/** The top-up of this session, locked; null when it has not been credited. */
export async function lockTopupBySession(tx: Tx, sessionId: string): Promise<TopupRow | null> {
  const { rows } = await tx.query<TopupDbRow>(
    'SELECT * FROM topups WHERE session_id = $1 FOR UPDATE',
    [sessionId],
  );
  return rows[0] ? view(rows[0]) : null;
}

/** The top-up of this session, if credited (not locked). */
export async function topupOfSession(q: Queryable, sessionId: string): Promise<TopupRow | null> {
  const { rows } = await q.query<TopupDbRow>('SELECT * FROM topups WHERE session_id = $1', [
    sessionId,
  ]);
  return rows[0] ? view(rows[0]) : null;
}
