// What the operator console shows of billing: accounts owing a shortfall and Stripe's events received.
import type { Db } from '../db/pool.ts';
import { accountsWithShortfall, type ShortfallRow } from '../db/accounts.ts';
import { listStripeEvents, type StripeEventRow } from '../db/stripe-events.ts';

export type { ShortfallRow, StripeEventRow };

export const shortfallAccounts = (db: Db): Promise<ShortfallRow[]> => accountsWithShortfall(db, 100);

export const stripeEventLog = (db: Db, o: { limit: number; accountId?: string }): Promise<StripeEventRow[]> =>
  listStripeEvents(db, o);

/** How the console names a ledger entry: a Stripe credit is a top-up. */
export function ledgerLabel(e: { kind: string; reason?: string | null }): string {
  return e.kind === 'credit' && e.reason?.startsWith('Stripe Checkout ') ? 'top-up' : e.kind;
}
