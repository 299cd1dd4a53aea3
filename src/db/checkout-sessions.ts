// SQL of checkout_sessions (migrations/024): every Checkout Session this service creates, recorded
// before Stripe is asked. The rows are what a paid event is checked against (ours, at this
// amount), what bounds how many an account creates, and where a failed asynchronous payment is
// remembered.
import { transaction, type Db, type Queryable, type Tx } from './pool.ts';

export type CheckoutMode = 'payment' | 'setup';

export interface CheckoutSessionRow {
  id: string;
  accountId: string;
  mode: CheckoutMode;
  amountCents: number | null;
  sessionId: string | null;
  failedAt: Date | null;
  createdAt: Date;
}

interface DbRow {
  id: string;
  account_id: string;
  mode: CheckoutMode;
  amount_cents: number | null;
  session_id: string | null;
  failed_at: Date | null;
  created_at: Date;
}

const view = (r: DbRow): CheckoutSessionRow => ({
  id: r.id,
  accountId: r.account_id,
  mode: r.mode,
  amountCents: r.amount_cents,
  sessionId: r.session_id,
  failedAt: r.failed_at,
  createdAt: r.created_at,
});

export type Reserved = { ok: true } | { ok: false; retryAt: Date };

/**
 * Records a session about to be created, unless the account already created `max` in the last
 * `windowS` seconds (of any mode); then nothing is written and `retryAt` is when the oldest of
 * those leaves the window. The count and the insert run under a lock per account held to the
 * commit, so parallel requests, in any number of processes, are counted one after the other: never
 * more than `max` in any window.
 */
export async function reserveCheckoutSession(
  db: Db,
  r: {
    id: string;
    accountId: string;
    mode: CheckoutMode;
    amountCents: number | null;
    max: number;
    windowS: number;
  },
): Promise<Reserved> {
  return transaction(db, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('checkout:' || $1, 0))", [
      r.accountId,
    ]);
    // A new statement, so its snapshot sees every insert committed before the lock was ours.
    const { rowCount } = await tx.query(
      `INSERT INTO checkout_sessions (id, account_id, mode, amount_cents)
       SELECT $1, $2, $3, $4
       WHERE (SELECT count(*) FROM checkout_sessions
              WHERE account_id = $2 AND created_at > now() - make_interval(secs => $5)) < $6`,
      [r.id, r.accountId, r.mode, r.amountCents, r.windowS, r.max],
    );
    if (rowCount === 1) return { ok: true };
    const { rows } = await tx.query<{ retry_at: Date }>(
      `SELECT created_at + make_interval(secs => $2) AS retry_at FROM checkout_sessions
       WHERE account_id = $1 AND created_at > now() - make_interval(secs => $2)
       ORDER BY created_at DESC OFFSET $3::int - 1 LIMIT 1`,
      [r.accountId, r.windowS, r.max],
    );
    return { ok: false, retryAt: rows[0]?.retry_at ?? new Date(Date.now() + 1000) };
  });
}

/** Names the session Stripe created for our row (once: a row names one session). */
export async function linkCheckoutSession(db: Queryable, id: string, sessionId: string) {
  await db.query(
    'UPDATE checkout_sessions SET session_id = $2 WHERE id = $1 AND session_id IS NULL',
    [id, sessionId],
  );
}

/**
 * Our row of Stripe's session `sessionId`, locked; null when we did not create it. `ref` is the
 * session's metadata[rendergate_checkout]: a row whose create answer never arrived (it names no
 * session yet) is linked to the session here, so its payment is not lost.
 */
export async function lockCheckoutSession(
  tx: Tx,
  sessionId: string,
  ref: string | null,
): Promise<CheckoutSessionRow | null> {
  const find = () =>
    tx.query<DbRow>('SELECT * FROM checkout_sessions WHERE session_id = $1 FOR UPDATE', [
      sessionId,
    ]);
  let { rows } = await find();
  if (!rows[0] && ref) {
    ({ rows } = await tx.query<DbRow>(
      `UPDATE checkout_sessions SET session_id = $1 WHERE id = $2 AND session_id IS NULL
       RETURNING *`,
      [sessionId, ref],
    ));
    // A parallel event linked it first: its commit is seen by a new statement.
    if (!rows[0]) ({ rows } = await find());
  }
  return rows[0] ? view(rows[0]) : null;
}

/** Remembers that the session's payment failed; true the first time. */
export async function markCheckoutFailed(tx: Tx, id: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    'UPDATE checkout_sessions SET failed_at = now() WHERE id = $1 AND failed_at IS NULL',
    [id],
  );
  return rowCount === 1;
}

/** Whether the asynchronous payment of Stripe's session `sessionId` failed (false: not ours). */
export async function checkoutFailed(q: Queryable, sessionId: string): Promise<boolean> {
  const { rows } = await q.query(
    'SELECT 1 FROM checkout_sessions WHERE session_id = $1 AND failed_at IS NOT NULL',
    [sessionId],
  );
  return rows.length > 0;
}
