// What the operator console shows of billing: accounts owing a shortfall and Stripe's events received.
import type { Db } from '../db/pool.ts';
import { accountsWithShortfall, type ShortfallRow } from '../db/accounts.ts';
import { listStripeEvents, type StripeEventRow } from '../db/stripe-events.ts';
import { authorize } from '../domain/authorize.ts';
import type { Principal } from '../domain/principal.ts';

export type { ShortfallRow, StripeEventRow };

export class Billing {
  constructor(private db: Db) {}

  async shortfalls(p: Principal): Promise<ShortfallRow[]> {
    authorize(p, 'accounts.administer');
    return accountsWithShortfall(this.db, 100);
  }

  async stripeEvents(
    p: Principal,
    o: { limit: number; accountId?: string },
  ): Promise<StripeEventRow[]> {
    authorize(p, 'accounts.administer');
    return listStripeEvents(this.db, o);
  }
}

/** How the console names a ledger entry: a Stripe credit is a top-up. */
export function ledgerLabel(e: { kind: string; reason?: string | null }): string {
  return e.kind === 'credit' && e.reason?.startsWith('Stripe Checkout ') ? 'top-up' : e.kind;
}
