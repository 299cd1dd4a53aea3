// The one home of balance changes beyond a render's own charge and refund: credits (the operator's and
// Stripe top-ups) and reversals (a refunded or disputed top-up). Every change is a guarded statement
// with its ledger entry in the same transaction (src/db/ledger.ts), so the entries always add up to
// the balance.
import { ApiError } from '../domain/errors.ts';
import { transaction, type Db, type Tx } from '../db/pool.ts';
import { creditAccount, reverseAccount, MAX_BALANCE_CENTS, type ReversalResult } from '../db/ledger.ts';

export { MAX_BALANCE_CENTS };

export interface Credited { entryId: string; balanceCents: number }

/** Credits an account inside `tx`; ACCOUNT_NOT_FOUND or INVALID_INPUT (past the largest balance). */
export async function creditIn(tx: Tx, o: { accountId: string; amountCents: number; reason: string | null;
  entryId?: string }): Promise<Credited> {
  const r = await creditAccount(tx, o);
  if (r.ok) return { entryId: r.entryId, balanceCents: r.balanceCents };
  if (r.reason === 'no_account') throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${o.accountId}.`);
  throw new ApiError('INVALID_INPUT', `The credit would take the balance past ${MAX_BALANCE_CENTS} cents.`,
    [{ field: 'amountCents', message: `would take the balance past ${MAX_BALANCE_CENTS}` }]);
}

/** An operator's credit, in a transaction of its own. */
export function credit(db: Db, o: { accountId: string; amountCents: number; reason: string | null }): Promise<Credited> {
  return transaction(db, (tx) => creditIn(tx, o));
}

/** Takes money back inside `tx`: what the balance holds, the rest recorded as the account's shortfall. */
export async function reverseIn(tx: Tx, o: { accountId: string; amountCents: number; reason: string }):
  Promise<ReversalResult> {
  const r = await reverseAccount(tx, o);
  if (!r) throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${o.accountId}.`);
  return r;
}
