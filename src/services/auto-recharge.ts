// Auto-recharge's settings (docs/billing.md "Auto-recharge"), for the Add credit page: Save a card
// (a Checkout Session in setup mode for the account's own Stripe customer, made once), Remove card,
// Recharge below, Recharge amount, on or off. Every change holds the settings row's lock, as a
// recharge's start does, so a card is never removed under a recharge in flight, and each is
// audited. The recharges themselves are auto-recharge-run.ts's.
import type Stripe from 'stripe';
import type { Logger } from 'pino';
import { transaction, type Db } from '../db/pool.ts';
import { ApiError } from '../domain/errors.ts';
import { accountFor } from '../domain/authorize.ts';
import type { Principal } from '../domain/principal.ts';
import { balanceOf } from '../db/accounts.ts';
import {
  autoRechargeOf,
  forgetCard,
  keepCustomer,
  lockAutoRecharge,
  setPlan,
  type AutoRechargeRow,
} from '../db/auto-recharge.ts';
import { hasInFlight, recentRecharges, type RechargeRow } from '../db/auto-recharges.ts';
import { queueDetach } from '../db/card-detachments.ts';
import { recordAudit, NO_SOURCE, type AuditSource } from '../audit/record.ts';
import { detachCard } from './card-detach.ts';
import type { CheckoutSessions } from './checkout-sessions.ts';

export interface AutoRechargeView {
  settings: AutoRechargeRow | null;
  recent: RechargeRow[];
  perDay: number;
  inFlight: boolean;
}

export interface Plan {
  belowCents: number;
  amountCents: number;
  enabled: boolean;
}

const invalid = (field: string, message: string) =>
  new ApiError('INVALID_INPUT', message, [{ field, message }]);

export class AutoRecharge {
  constructor(
    private o: {
      db: Db;
      stripe: Stripe;
      sessions: CheckoutSessions;
      offered: number[];
      perDay: number;
      publicUrl: string;
      log?: Pick<Logger, 'warn'>;
    },
  ) {}

  async view(p: Principal): Promise<AutoRechargeView> {
    const accountId = accountFor(p, 'ledger.view');
    const [settings, recent, inFlight] = await Promise.all([
      autoRechargeOf(this.o.db, accountId),
      recentRecharges(this.o.db, accountId, 5),
      hasInFlight(this.o.db, accountId),
    ]);
    return { settings, recent, perDay: this.o.perDay, inFlight };
  }

  /**
   * Save a card: the account's Stripe customer (made once, under an Idempotency-Key of the
   * account), then a setup-mode Checkout Session for it; its URL. The session counts against the
   * account's sessions an hour like a top-up's.
   */
  async startSetup(p: Principal): Promise<string> {
    const accountId = accountFor(p, 'autoRecharge.manage');
    const customerId = await this.customerOf(accountId);
    const base = this.o.publicUrl;
    const session = await this.o.sessions.create(accountId, 'setup', null, {
      currency: 'eur',
      customer: customerId,
      success_url: `${base}/credit?card=saving`,
      cancel_url: `${base}/credit?cancelled=1`,
    });
    if (!session.url)
      throw new ApiError('SERVICE_UNAVAILABLE', 'Stripe answered without a page to save a card.');
    return session.url;
  }

  private async customerOf(accountId: string): Promise<string> {
    const known = await autoRechargeOf(this.o.db, accountId);
    if (known?.customerId) return known.customerId;
    let customer: Stripe.Customer;
    try {
      customer = await this.o.stripe.customers.create(
        { metadata: { rendergate_account: accountId } },
        { idempotencyKey: `rendergate-customer-${accountId}` },
      );
    } catch {
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        'Stripe could not be reached to save a card; nothing was changed. Try again later.',
      );
    }
    return transaction(this.o.db, async (tx) => {
      await lockAutoRecharge(tx, accountId);
      await keepCustomer(tx, accountId, customer.id);
      return (await lockAutoRecharge(tx, accountId)).customerId!;
    });
  }

  /**
   * Recharge below, Recharge amount, on or off. Refused (400, nothing written): an amount not
   * offered, a threshold not below the amount (one recharge must lift the balance over it), a
   * threshold above the current balance (it would charge the card at once: add credit first),
   * turning on without a saved card.
   */
  async savePlan(p: Principal, plan: Plan, src: AuditSource = NO_SOURCE): Promise<void> {
    const accountId = accountFor(p, 'autoRecharge.manage');
    if (!this.o.offered.includes(plan.amountCents))
      throw invalid('amount', 'Choose one of the recharge amounts offered.');
    if (!Number.isSafeInteger(plan.belowCents) || plan.belowCents <= 0)
      throw invalid('below', 'Recharge below must be an amount of at least €0.01.');
    if (plan.belowCents >= plan.amountCents)
      throw invalid('below', 'Recharge below must be less than the recharge amount.');
    await transaction(this.o.db, async (tx) => {
      const s = await lockAutoRecharge(tx, accountId);
      if (plan.enabled && !s.paymentMethod)
        throw invalid('enabled', 'Save a card before turning auto-recharge on.');
      const balance = await balanceOf(tx, accountId);
      if (plan.enabled && plan.belowCents > balance)
        throw invalid(
          'below',
          'Recharge below is above your balance: the card would be charged at once. ' +
            'Add credit first, or choose a lower threshold.',
        );
      await setPlan(tx, accountId, plan);
      await recordAudit(tx, {
        account: accountId,
        action: 'auto_recharge.changed',
        actor: p,
        target: null,
        ...src,
        details: { ...plan },
      });
    });
  }

  /**
   * Remove card: refused (400) while a recharge is in flight, since its answer is still due.
   * The card is forgotten, audited and queued for detaching at Stripe in one transaction: from its
   * commit no recharge of ours can use it, whatever Stripe does next. Then Stripe is asked to
   * detach it (card-detach.ts); if Stripe fails or is unreachable the removal stands and a worker's
   * runner asks again until Stripe has detached it. `detached`: whether Stripe has already.
   */
  async removeCard(p: Principal, src: AuditSource = NO_SOURCE): Promise<{ detached: boolean }> {
    const accountId = accountFor(p, 'autoRecharge.manage');
    const card = await transaction(this.o.db, async (tx) => {
      const s = await lockAutoRecharge(tx, accountId);
      if (!s.paymentMethod) throw invalid('card', 'No card is saved.');
      if (await hasInFlight(tx, accountId))
        throw invalid(
          'card',
          'A recharge with this card is in progress; remove the card once it has finished ' +
            '(in a minute or so).',
        );
      await forgetCard(tx, accountId);
      if (s.customerId)
        await queueDetach(tx, {
          paymentMethod: s.paymentMethod,
          accountId,
          customerId: s.customerId,
        });
      await recordAudit(tx, {
        account: accountId,
        action: 'auto_recharge.changed',
        actor: p,
        target: null,
        ...src,
        details: { card: null, removed: `${s.cardBrand} ${s.cardLast4}` },
      });
      return s.paymentMethod;
    });
    const detached = await detachCard(this.o.db, this.o.stripe, card, this.o.log).catch(
      () => false,
    );
    return { detached };
  }
}
