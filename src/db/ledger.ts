// The statements on `ledger_entries`: written only by services/ledger.ts (every balance change),
// read for the account's history. The charge's entry is written by rendergate_create_generations
// (migrations/006 and 011, called from db/generations.ts createGenerations).
import type { Queryable, Tx } from './pool.ts';
import { newId } from '../domain/ids.ts';

/** The kinds of entry (the column's CHECK, migrations/001 and later). */
export type LedgerKind = 'charge' | 'refund' | 'credit' | 'reversal';

export interface NewEntry {
  id: string;
  accountId: string;
  kind: LedgerKind;
  amountCents: number;
  generationId?: string | null;
  reason?: string | null;
}

export async function insertEntry(q: Queryable, e: NewEntry): Promise<void> {
  await q.query(
    `INSERT INTO ledger_entries (id, account_id, kind, amount_cents, generation_id, reason)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [e.id, e.accountId, e.kind, e.amountCents, e.generationId ?? null, e.reason ?? null],
  );
}

export interface EntryRow {
  id: string;
  kind: string;
  amount_cents: number;
  generation_id: string | null;
  reason: string | null;
  created_at: Date;
}

/** Up to `limit` entries of the account older than `after` (an entry id), newest first. */
export async function entriesOf(
  q: Queryable,
  accountId: string,
  after: string | null,
  limit: number,
): Promise<EntryRow[]> {
  const { rows } = await q.query(
    `SELECT id, kind, amount_cents, generation_id, reason, created_at FROM ledger_entries
     WHERE account_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
    [accountId, after, limit],
  );
  return rows as EntryRow[];
}

// Credits and reversals (migrations/014): the account row locked first (the order creates and refunds
// take it in), so the balance read is the one changed; what a reversal cannot take is the shortfall.

/** The largest balance an account can hold: 2^53 - 1, the largest integer a JSON client reads exactly. */
const MAX_BALANCE = Number.MAX_SAFE_INTEGER;

interface Locked {
  balance: number;
  shortfall: number;
}

async function lockAccount(tx: Tx, accountId: string): Promise<Locked | null> {
  const { rows } = await tx.query<{ balance_cents: number; shortfall_cents: number }>(
    'SELECT balance_cents, shortfall_cents FROM accounts WHERE id = $1 FOR UPDATE',
    [accountId],
  );
  return rows[0] ? { balance: rows[0].balance_cents, shortfall: rows[0].shortfall_cents } : null;
}

export type CreditResult =
  | { ok: true; entryId: string; balanceCents: number; settledCents: number }
  | { ok: false; reason: 'no_account' | 'too_large' };

/**
 * Credits `amountCents`. An account with a shortfall (an earlier reversal that found too little)
 * pays it from this credit first: a `reversal` entry of what was taken, beside the `credit` entry.
 */
export async function creditAccount(
  tx: Tx,
  o: { accountId: string; amountCents: number; reason: string | null; entryId?: string },
): Promise<CreditResult> {
  const a = await lockAccount(tx, o.accountId);
  if (!a) return { ok: false, reason: 'no_account' };
  const settled = Math.min(a.shortfall, o.amountCents);
  const balance = a.balance + o.amountCents - settled;
  if (a.balance + o.amountCents > MAX_BALANCE) return { ok: false, reason: 'too_large' };
  await tx.query(
    'UPDATE accounts SET balance_cents = $2, shortfall_cents = shortfall_cents - $3 WHERE id = $1',
    [o.accountId, balance, settled],
  );
  const entryId = o.entryId ?? newId('led');
  await insertEntry(tx, {
    id: entryId,
    accountId: o.accountId,
    kind: 'credit',
    amountCents: o.amountCents,
    reason: o.reason,
  });
  if (settled > 0) {
    await insertEntry(tx, {
      id: newId('led'),
      accountId: o.accountId,
      kind: 'reversal',
      amountCents: settled,
      reason: `Shortfall made good from ${entryId}`,
    });
  }
  return { ok: true, entryId, balanceCents: balance, settledCents: settled };
}

export interface ReversalResult {
  takenCents: number;
  shortfallCents: number;
  entryId: string | null;
  balanceCents: number;
}

/**
 * Takes `amountCents` back (a refunded or disputed top-up): what the balance holds, as a `reversal`
 * entry, and the rest as the account's shortfall. Null when there is no such account.
 */
export async function reverseAccount(
  tx: Tx,
  o: { accountId: string; amountCents: number; reason: string },
): Promise<ReversalResult | null> {
  const a = await lockAccount(tx, o.accountId);
  if (!a) return null;
  const taken = Math.min(a.balance, o.amountCents);
  const short = o.amountCents - taken;
  await tx.query(
    'UPDATE accounts SET balance_cents = balance_cents - $2, shortfall_cents = shortfall_cents + $3 WHERE id = $1',
    [o.accountId, taken, short],
  );
  let entryId: string | null = null;
  if (taken > 0) {
    entryId = newId('led');
    const reason = short > 0 ? `${o.reason} (shortfall ${short} cents)` : o.reason;
    await insertEntry(tx, {
      id: entryId,
      accountId: o.accountId,
      kind: 'reversal',
      amountCents: taken,
      reason,
    });
  }
  return { takenCents: taken, shortfallCents: short, entryId, balanceCents: a.balance - taken };
}
