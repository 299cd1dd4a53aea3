// Balance changes with their ledger entries: the SQL half of src/services/ledger.ts. Each function runs
// in its caller's transaction and locks the account row first (the order creates and refunds take it
// in, migrations/006), so the balance it reads is the one it changes. The CHECKs on accounts make a
// negative balance, or one past 2^53 - 1, impossible whatever a caller does.
import type { Tx } from './pool.ts';
import { newId } from '../domain/ids.ts';

/** The largest balance an account can hold: 2^53 - 1, the largest integer a JSON client reads exactly. */
export const MAX_BALANCE_CENTS = Number.MAX_SAFE_INTEGER;

interface Locked { balance: number; shortfall: number }

async function lockAccount(tx: Tx, accountId: string): Promise<Locked | null> {
  const { rows } = await tx.query(
    'SELECT balance_cents, shortfall_cents FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  return rows[0] ? { balance: rows[0].balance_cents, shortfall: rows[0].shortfall_cents } : null;
}

async function insertEntry(tx: Tx, e: { id: string; accountId: string; kind: 'credit' | 'reversal';
  amountCents: number; reason: string | null }) {
  await tx.query(
    `INSERT INTO ledger_entries (id, account_id, kind, amount_cents, reason) VALUES ($1, $2, $3, $4, $5)`,
    [e.id, e.accountId, e.kind, e.amountCents, e.reason]);
}

export type CreditResult =
  | { ok: true; entryId: string; balanceCents: number; settledCents: number }
  | { ok: false; reason: 'no_account' | 'too_large' };

/**
 * Credits `amountCents`. An account with a shortfall (an earlier reversal that found too little)
 * pays it from this credit first: a `reversal` entry of what was taken, beside the `credit` entry.
 */
export async function creditAccount(tx: Tx, o: { accountId: string; amountCents: number;
  reason: string | null; entryId?: string }): Promise<CreditResult> {
  const a = await lockAccount(tx, o.accountId);
  if (!a) return { ok: false, reason: 'no_account' };
  const settled = Math.min(a.shortfall, o.amountCents);
  const balance = a.balance + o.amountCents - settled;
  if (a.balance + o.amountCents > MAX_BALANCE_CENTS) return { ok: false, reason: 'too_large' };
  await tx.query('UPDATE accounts SET balance_cents = $2, shortfall_cents = shortfall_cents - $3 WHERE id = $1',
    [o.accountId, balance, settled]);
  const entryId = o.entryId ?? newId('led');
  await insertEntry(tx, { id: entryId, accountId: o.accountId, kind: 'credit', amountCents: o.amountCents,
    reason: o.reason });
  if (settled > 0) {
    await insertEntry(tx, { id: newId('led'), accountId: o.accountId, kind: 'reversal', amountCents: settled,
      reason: `Shortfall made good from ${entryId}` });
  }
  return { ok: true, entryId, balanceCents: balance, settledCents: settled };
}

export interface ReversalResult { takenCents: number; shortfallCents: number; entryId: string | null; balanceCents: number }

/**
 * Takes `amountCents` back (a refunded or disputed top-up): what the balance holds, as a `reversal`
 * entry, and the rest as the account's shortfall. Null when there is no such account.
 */
export async function reverseAccount(tx: Tx, o: { accountId: string; amountCents: number; reason: string }):
  Promise<ReversalResult | null> {
  const a = await lockAccount(tx, o.accountId);
  if (!a) return null;
  const taken = Math.min(a.balance, o.amountCents);
  const short = o.amountCents - taken;
  await tx.query(
    'UPDATE accounts SET balance_cents = balance_cents - $2, shortfall_cents = shortfall_cents + $3 WHERE id = $1',
    [o.accountId, taken, short]);
  let entryId: string | null = null;
  if (taken > 0) {
    entryId = newId('led');
    const reason = short > 0 ? `${o.reason} (shortfall ${short} cents)` : o.reason;
    await insertEntry(tx, { id: entryId, accountId: o.accountId, kind: 'reversal', amountCents: taken, reason });
  }
  return { takenCents: taken, shortfallCents: short, entryId, balanceCents: a.balance - taken };
}
