// An account's auto-recharge settings (migrations/037): its Stripe customer, the saved card, the
// threshold and amount, on or off. The threshold is mirrored onto accounts.recharge_below_cents
// while it is on, in the same statement's transaction, for the wake-up trigger.
import type { Queryable, Tx } from './pool.ts';

export interface AutoRechargeRow {
  accountId: string;
  customerId: string | null;
  paymentMethod: string | null;
  cardBrand: string | null;
  cardLast4: string | null;
  belowCents: number | null;
  amountCents: number | null;
  enabled: boolean;
  offReason: string | null;
}

interface DbRow {
  account_id: string;
  customer_id: string | null;
  payment_method: string | null;
  card_brand: string | null;
  card_last4: string | null;
  below_cents: number | null;
  amount_cents: number | null;
  enabled: boolean;
  off_reason: string | null;
}

const view = (r: DbRow): AutoRechargeRow => ({
  accountId: r.account_id,
  customerId: r.customer_id,
  paymentMethod: r.payment_method,
  cardBrand: r.card_brand,
  cardLast4: r.card_last4,
  belowCents: r.below_cents,
  amountCents: r.amount_cents,
  enabled: r.enabled,
  offReason: r.off_reason,
});

export async function autoRechargeOf(
  q: Queryable,
  accountId: string,
): Promise<AutoRechargeRow | null> {
  const { rows } = await q.query<DbRow>('SELECT * FROM auto_recharge WHERE account_id = $1', [
    accountId,
  ]);
  return rows[0] ? view(rows[0]) : null;
}

/** The settings row, made if missing, locked: every change of it and every recharge's start. */
export async function lockAutoRecharge(tx: Tx, accountId: string): Promise<AutoRechargeRow> {
  await tx.query(
    'INSERT INTO auto_recharge (account_id) VALUES ($1) ON CONFLICT (account_id) DO NOTHING',
    [accountId],
  );
  const { rows } = await tx.query<DbRow>(
    'SELECT * FROM auto_recharge WHERE account_id = $1 FOR UPDATE',
    [accountId],
  );
  return view(rows[0]);
}

/** The account's Stripe customer, kept once: the first one recorded wins. */
export async function keepCustomer(tx: Tx, accountId: string, customerId: string) {
  await tx.query(
    `UPDATE auto_recharge SET customer_id = $2, updated_at = now()
      WHERE account_id = $1 AND customer_id IS NULL`,
    [accountId, customerId],
  );
}

/** The card a setup session saved (of this customer only); it replaces an earlier card. */
export async function saveCard(
  tx: Tx,
  c: { accountId: string; customerId: string; paymentMethod: string; brand: string; last4: string },
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE auto_recharge SET payment_method = $3, card_brand = $4, card_last4 = $5,
            updated_at = now()
      WHERE account_id = $1 AND customer_id = $2`,
    [c.accountId, c.customerId, c.paymentMethod, c.brand, c.last4],
  );
  return rowCount === 1;
}

/** Threshold, amount and on/off (the CHECK refuses on without a card or a threshold ≥ amount). */
export async function setPlan(
  tx: Tx,
  accountId: string,
  p: { belowCents: number | null; amountCents: number | null; enabled: boolean },
) {
  await tx.query(
    `UPDATE auto_recharge SET below_cents = $2, amount_cents = $3, enabled = $4,
            off_reason = NULL, updated_at = now() WHERE account_id = $1`,
    [accountId, p.belowCents, p.amountCents, p.enabled],
  );
  await mirror(tx, accountId, p.enabled ? p.belowCents : null);
}

/** Turns it off, saying why (a decline, requires_action); false when it was off already. */
export async function turnOff(tx: Tx, accountId: string, reason: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE auto_recharge SET enabled = false, off_reason = $2, updated_at = now()
      WHERE account_id = $1 AND enabled`,
    [accountId, reason.slice(0, 500)],
  );
  await mirror(tx, accountId, null);
  return rowCount === 1;
}

/** Forgets the card, and so turns auto-recharge off. */
export async function forgetCard(tx: Tx, accountId: string) {
  await tx.query(
    `UPDATE auto_recharge SET payment_method = NULL, card_brand = NULL, card_last4 = NULL,
            enabled = false, updated_at = now() WHERE account_id = $1`,
    [accountId],
  );
  await mirror(tx, accountId, null);
}

async function mirror(tx: Tx, accountId: string, belowCents: number | null) {
  await tx.query(
    `UPDATE accounts SET recharge_below_cents = $2
      WHERE id = $1 AND recharge_below_cents IS DISTINCT FROM $2`,
    [accountId, belowCents],
  );
}
