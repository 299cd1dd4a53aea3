// Reads of the accounts table for billing (issue 23): shortfalls and the balance a page shows.
import type { Queryable } from './pool.ts';

export interface ShortfallRow { id: string; email: string; balanceCents: number; shortfallCents: number }

/** Accounts that owe money after a reversal found too little: they start no live render until paid. */
export async function accountsWithShortfall(db: Queryable, limit = 100): Promise<ShortfallRow[]> {
  const { rows } = await db.query(
    `SELECT id, email, balance_cents, shortfall_cents FROM accounts WHERE shortfall_cents > 0
     ORDER BY id DESC LIMIT $1`, [limit]);
  return rows.map((r) => ({ id: r.id, email: r.email, balanceCents: r.balance_cents, shortfallCents: r.shortfall_cents }));
}

/** The account's balance and shortfall; null when there is no such account. */
export async function balanceOf(db: Queryable, accountId: string):
  Promise<{ balanceCents: number; shortfallCents: number } | null> {
  const { rows } = await db.query('SELECT balance_cents, shortfall_cents FROM accounts WHERE id = $1', [accountId]);
  return rows[0] ? { balanceCents: rows[0].balance_cents, shortfallCents: rows[0].shortfall_cents } : null;
}
