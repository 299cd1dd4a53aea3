// Credit and reversal: money coming in (the operator's credit, a Stripe top-up) and going back out
// (a top-up refunded or disputed at Stripe). Each locks the account row first, so the balance read
// is the one changed, and writes its entry in the caller's transaction. What a reversal cannot take
// from the balance is the account's shortfall (docs/billing.md), which the next credits pay first.
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Tx } from '../db/pool.ts';
import { lockAccount, setBalance, takeFromBalance } from './balance.ts';
import { insertEntry } from './entries.ts';
import { alertIfLow } from './alerts.ts';

/** The largest balance: 2^53 - 1, the largest integer a JSON client reads exactly. */
export const MAX_BALANCE_CENTS = Number.MAX_SAFE_INTEGER;

const noAccount = (id: string) => new ApiError('ACCOUNT_NOT_FOUND', `No account ${id}.`);

export interface Credited {
  entryId: string;
  balanceCents: number;
  /** What went to the account's shortfall rather than its balance. */
  settledCents: number;
}

/**
 * Credits `amountCents` inside `tx`. An account with a shortfall pays it from this credit first: a
 * `reversal` entry of what was taken, beside the `credit` entry. ACCOUNT_NOT_FOUND, or
 * INVALID_INPUT when the balance would pass MAX_BALANCE_CENTS (migrations/007 refuses it too).
 */
export async function creditIn(
  tx: Tx,
  o: { accountId: string; amountCents: number; reason: string | null; entryId?: string },
): Promise<Credited> {
  const a = await lockAccount(tx, o.accountId);
  if (!a) throw noAccount(o.accountId);
  if (a.balance + o.amountCents > MAX_BALANCE_CENTS)
    throw new ApiError(
      'INVALID_INPUT',
      `The credit would take the balance past ${MAX_BALANCE_CENTS} cents.`,
      [{ field: 'amountCents', message: `would take the balance past ${MAX_BALANCE_CENTS}` }],
    );
  const settled = Math.min(a.shortfall, o.amountCents);
  const balance = a.balance + o.amountCents - settled;
  await setBalance(tx, o.accountId, balance, settled);
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
  return { entryId, balanceCents: balance, settledCents: settled };
}

export interface ReversalResult {
  takenCents: number;
  shortfallCents: number;
  entryId: string | null;
  balanceCents: number;
}

/**
 * Reversal inside `tx`: takes `amountCents` back (a refunded or disputed top-up), what the balance
 * holds as a `reversal` entry and the rest as the account's shortfall. ACCOUNT_NOT_FOUND when there
 * is no such account.
 */
export async function reverseIn(
  tx: Tx,
  o: { accountId: string; amountCents: number; reason: string },
): Promise<ReversalResult> {
  const a = await lockAccount(tx, o.accountId);
  if (!a) throw noAccount(o.accountId);
  const taken = Math.min(a.balance, o.amountCents);
  const short = o.amountCents - taken;
  await takeFromBalance(tx, o.accountId, taken, short);
  await alertIfLow(tx, o.accountId, a.balance, a.balance - taken, a.lowBalance);
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

/**
 * Reinstatement inside `tx`: a won dispute's money comes back (services/stripe-settle.ts). A
 * credit, the kind clients know, so it pays a shortfall first like any credit; its reason names
 * the dispute.
 */
export function reinstateIn(
  tx: Tx,
  o: { accountId: string; amountCents: number; disputeId: string },
): Promise<Credited> {
  return creditIn(tx, {
    accountId: o.accountId,
    amountCents: o.amountCents,
    reason: `Stripe dispute won ${o.disputeId}`,
  });
}
