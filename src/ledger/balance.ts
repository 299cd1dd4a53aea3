// The statements that change `accounts.balance_cents` and `shortfall_cents`, outside the charge
// (which sql/create_generations.sql takes in its batch). Only the operations of this folder call
// them, each with its ledger entry in the same transaction; the CHECKs on the columns
// (migrations/001, 007, 014) keep the balance between 0 and 2^53 - 1 whatever a caller does.
import type { Tx } from '../db/pool.ts';

export interface LockedAccount {
  balance: number;
  shortfall: number;
  /** The low-balance alert's threshold (null: none). */
  lowBalance: number | null;
}

/**
 * Locks the account row for a change computed from it (a credit, a reversal): taken first, as every
 * create batch and refund takes it before a key's day row. Null when there is no such account.
 */
export async function lockAccount(tx: Tx, accountId: string): Promise<LockedAccount | null> {
  const { rows } = await tx.query<{
    balance_cents: number;
    shortfall_cents: number;
    low_balance_cents: number | null;
  }>(
    `SELECT balance_cents, shortfall_cents, low_balance_cents FROM accounts WHERE id = $1
     FOR UPDATE`,
    [accountId],
  );
  const r = rows[0];
  return r
    ? { balance: r.balance_cents, shortfall: r.shortfall_cents, lowBalance: r.low_balance_cents }
    : null;
}

/** Returns `cents` to the balance: a refund gives back what its charge took from it. */
export async function returnToBalance(tx: Tx, accountId: string, cents: number): Promise<void> {
  await tx.query('UPDATE accounts SET balance_cents = balance_cents + $2 WHERE id = $1', [
    accountId,
    cents,
  ]);
}

/** Sets the balance of a locked account and lowers its shortfall by `settled` (a credit). */
export async function setBalance(
  tx: Tx,
  accountId: string,
  balance: number,
  settled: number,
): Promise<void> {
  await tx.query(
    'UPDATE accounts SET balance_cents = $2, shortfall_cents = shortfall_cents - $3 WHERE id = $1',
    [accountId, balance, settled],
  );
}

/** Takes `taken` from the balance and adds `short` to the shortfall (a reversal). */
export async function takeFromBalance(
  tx: Tx,
  accountId: string,
  taken: number,
  short: number,
): Promise<void> {
  await tx.query(
    `UPDATE accounts SET balance_cents = balance_cents - $2, shortfall_cents = shortfall_cents + $3
     WHERE id = $1`,
    [accountId, taken, short],
  );
}
