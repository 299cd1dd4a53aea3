// Account alerts decided by the ledger (docs/billing.md "Alerts"): a change that takes the balance
// from at least the account's low-balance threshold to below it raises `account.balance_low`, once
// per crossing (the balance must rise to the threshold again before the next one: only a decrease
// from at or above it crosses). The charge decides it in its SQL function; a reversal here. The
// alert is a row of the outbox (sql/account_alert.sql), written in the change's transaction.
import { ApiError } from '../domain/errors.ts';
import type { Tx } from '../db/pool.ts';

/** The low-balance alert when the balance fell from `before` to `after` below `threshold`. */
export async function alertIfLow(
  tx: Tx,
  accountId: string,
  before: number,
  after: number,
  threshold: number | null,
): Promise<boolean> {
  if (threshold === null || !(before >= threshold && after < threshold)) return false;
  await tx.query("SELECT rendergate_account_alert($1, 'account.balance_low', 'live', $2)", [
    accountId,
    JSON.stringify({ accountId, balanceCents: after, thresholdCents: threshold }),
  ]);
  return true;
}

/**
 * Sets (or with null, removes) the account's low-balance threshold inside `tx`, under its row lock:
 * a threshold above the balance would be crossed already, and is refused (400). The threshold it
 * replaces.
 */
export async function setLowBalanceIn(
  tx: Tx,
  accountId: string,
  cents: number | null,
): Promise<{ previous: number | null }> {
  const { rows } = await tx.query<{ balance_cents: number; low_balance_cents: number | null }>(
    'SELECT balance_cents, low_balance_cents FROM accounts WHERE id = $1 FOR UPDATE',
    [accountId],
  );
  if (!rows[0]) throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${accountId}.`);
  if (cents !== null && cents > rows[0].balance_cents)
    throw new ApiError(
      'INVALID_INPUT',
      `The low-balance alert of ${cents} cents is above the balance of ` +
        `${rows[0].balance_cents} cents: it would never be crossed.`,
      [{ field: 'lowBalanceCents', message: 'is above the balance' }],
    );
  await tx.query('UPDATE accounts SET low_balance_cents = $2 WHERE id = $1', [accountId, cents]);
  return { previous: rows[0].low_balance_cents };
}
