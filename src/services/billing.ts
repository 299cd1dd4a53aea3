// What the operator console shows of billing: accounts owing a shortfall and Stripe's events received.
import type { Db } from '../db/pool.ts';
import { accountsWithShortfall, type ShortfallRow } from '../db/accounts.ts';
import { listStripeEvents, type StripeEventRow } from '../db/stripe-events.ts';

export type { ShortfallRow, StripeEventRow };

export class Billing {
  constructor(private db: Db) {}

  shortfalls(): Promise<ShortfallRow[]> {
    return accountsWithShortfall(this.db, 100);
  }

  stripeEvents(o: { limit: number; accountId?: string }): Promise<StripeEventRow[]> {
    return listStripeEvents(this.db, o);
  }
}

/** How the console names a ledger entry: a Stripe credit is a top-up. */
export function ledgerLabel(e: { kind: string; reason?: string | null }): string {
  return e.kind === 'credit' && e.reason?.startsWith('Stripe Checkout ') ? 'top-up' : e.kind;
}
