// Auto-recharges (migrations/037): one row per PaymentIntent we ask Stripe for. The row's id is
// the call's Idempotency-Key; the partial unique index keeps one in flight per account; the count
// of a day's rows is read under the settings row's lock (lockAutoRecharge), so every start sees
// the ones before it, across processes.
import type { Queryable, Tx } from './pool.ts';

export interface RechargeRow {
  id: string;
  accountId: string;
  amountCents: number;
  customerId: string;
  paymentMethod: string;
  status: 'pending' | 'succeeded' | 'failed';
  paymentIntent: string | null;
  creditEntryId: string | null;
  failure: string | null;
  createdAt: Date;
}

interface DbRow {
  id: string;
  account_id: string;
  amount_cents: number;
  customer_id: string;
  payment_method: string;
  status: RechargeRow['status'];
  payment_intent: string | null;
  credit_entry_id: string | null;
  failure: string | null;
  created_at: Date;
}

const view = (r: DbRow): RechargeRow => ({
  id: r.id,
  accountId: r.account_id,
  amountCents: r.amount_cents,
  customerId: r.customer_id,
  paymentMethod: r.payment_method,
  status: r.status,
  paymentIntent: r.payment_intent,
  creditEntryId: r.credit_entry_id,
  failure: r.failure,
  createdAt: r.created_at,
});

/**
 * Starts a recharge, inside the transaction holding the settings row's lock, if the account is
 * below its threshold, none is in flight and fewer than `perDay` were made today (in `timeZone`);
 * null otherwise. The caller checked the settings (on, with a card).
 */
export async function startRecharge(
  tx: Tx,
  r: {
    id: string;
    accountId: string;
    amountCents: number;
    customerId: string;
    paymentMethod: string;
    belowCents: number;
    perDay: number;
    timeZone: string;
  },
): Promise<RechargeRow | null> {
  const { rows } = await tx.query<DbRow>(
    `WITH today AS (SELECT (now() AT TIME ZONE $8)::date AS day)
     INSERT INTO auto_recharges (id, account_id, amount_cents, customer_id, payment_method, day)
     SELECT $1, $2, $3, $4, $5, today.day FROM today
      WHERE (SELECT balance_cents FROM accounts WHERE id = $2) < $6
        AND (SELECT count(*) FROM auto_recharges x
              WHERE x.account_id = $2 AND x.day = today.day) < $7
     ON CONFLICT (account_id) WHERE status = 'pending' DO NOTHING
     RETURNING *`,
    [
      r.id,
      r.accountId,
      r.amountCents,
      r.customerId,
      r.paymentMethod,
      r.belowCents,
      r.perDay,
      r.timeZone,
    ],
  );
  return rows[0] ? view(rows[0]) : null;
}

/**
 * Takes the right to call Stripe for a pending recharge for `leaseS` seconds: one process calls
 * at a time, and one that died mid-call is retried (same Idempotency-Key) after the lease.
 */
export async function leaseRecharge(q: Queryable, id: string, leaseS: number) {
  const { rows } = await q.query<DbRow>(
    `UPDATE auto_recharges SET attempted_at = now()
      WHERE id = $1 AND status = 'pending'
        AND (attempted_at IS NULL OR attempted_at < now() - make_interval(secs => $2))
      RETURNING *`,
    [id, leaseS],
  );
  return rows[0] ? view(rows[0]) : null;
}

export async function lockRecharge(tx: Tx, id: string): Promise<RechargeRow | null> {
  const { rows } = await tx.query<DbRow>('SELECT * FROM auto_recharges WHERE id = $1 FOR UPDATE', [
    id,
  ]);
  return rows[0] ? view(rows[0]) : null;
}

/** The move to succeeded (from pending, or from failed when Stripe later took the money). */
export async function markSucceeded(
  tx: Tx,
  id: string,
  paymentIntent: string,
  creditEntryId: string,
) {
  await tx.query(
    `UPDATE auto_recharges SET status = 'succeeded', payment_intent = $2, credit_entry_id = $3
      WHERE id = $1 AND status <> 'succeeded'`,
    [id, paymentIntent, creditEntryId],
  );
}

export async function markFailed(tx: Tx, id: string, paymentIntent: string | null, why: string) {
  await tx.query(
    `UPDATE auto_recharges SET status = 'failed', failure = $3,
            payment_intent = coalesce(payment_intent, $2)
      WHERE id = $1 AND status = 'pending'`,
    [id, paymentIntent, why.slice(0, 500)],
  );
}

export async function hasInFlight(q: Queryable, accountId: string): Promise<boolean> {
  const { rows } = await q.query(
    "SELECT 1 FROM auto_recharges WHERE account_id = $1 AND status = 'pending'",
    [accountId],
  );
  return rows.length > 0;
}

/**
 * What the sweep looks at: accounts on and below their threshold with nothing in flight, and
 * recharges in flight whose call is not leased (never made, or its process died).
 */
export async function sweepDue(q: Queryable, leaseS: number, limit: number) {
  const { rows } = await q.query<{ account_id: string | null; recharge_id: string | null }>(
    `(SELECT a.id AS account_id, NULL AS recharge_id FROM accounts a
       WHERE a.recharge_below_cents IS NOT NULL AND a.balance_cents < a.recharge_below_cents
         AND NOT EXISTS (SELECT 1 FROM auto_recharges x
                          WHERE x.account_id = a.id AND x.status = 'pending')
       LIMIT $2)
     UNION ALL
     (SELECT NULL, id FROM auto_recharges
       WHERE status = 'pending'
         AND (attempted_at IS NULL OR attempted_at < now() - make_interval(secs => $1))
       LIMIT $2)`,
    [leaseS, limit],
  );
  return rows;
}

/** The recharges of an account today and in flight, for its settings page. */
export async function recentRecharges(q: Queryable, accountId: string, limit = 10) {
  const { rows } = await q.query<DbRow>(
    'SELECT * FROM auto_recharges WHERE account_id = $1 ORDER BY created_at DESC LIMIT $2',
    [accountId, limit],
  );
  return rows.map(view);
}

/** The account of a recharge (unlocked: read to take the locks in their order). */
export async function accountOfRecharge(q: Queryable, id: string): Promise<string | null> {
  const { rows } = await q.query<{ account_id: string }>(
    'SELECT account_id FROM auto_recharges WHERE id = $1',
    [id],
  );
  return rows[0]?.account_id ?? null;
}
