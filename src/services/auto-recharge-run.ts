// Auto-recharge's runner (docs/billing.md "Auto-recharge"), in every worker: woken by the
// rendergate_recharge notification (src/db/sql/recharge_wake.sql: a charge took a balance below
// its threshold) and by a poll that finds what a lost notification or a dead process left. For an
// account it starts at most one recharge (db/auto-recharges.ts: one in flight, N a day, under the
// settings row's lock), then asks Stripe for the PaymentIntent with the recharge's id as its
// Idempotency-Key: a call repeated after a crash or a lost answer makes no second payment. Its
// sweep also detaches at Stripe the cards forgotten while Stripe could not be reached.
import type Stripe from 'stripe';
import type { Logger } from 'pino';
import { transaction, type Db } from '../db/pool.ts';
import { Listener } from '../db/listener.ts';
import { newId } from '../domain/ids.ts';
import { lockAutoRecharge } from '../db/auto-recharge.ts';
import { leaseRecharge, startRecharge, sweepDue, type RechargeRow } from '../db/auto-recharges.ts';
import { billingContacts } from '../db/memberships.ts';
import { dueDetaches } from '../db/card-detachments.ts';
import { mailBillingContacts, type Mailer } from './mail.ts';
import { detachCard } from './card-detach.ts';
import { rechargeFailed, rechargeSucceeded } from './auto-recharge-outcomes.ts';

export const RECHARGE_CHANNEL = 'rendergate_recharge';
/** How long one process owns a call to Stripe before another may make it again. */
const LEASE_S = 60;
const POLL_MS = 5_000;

export interface RunnerOptions {
  db: Db;
  databaseUrl: string;
  stripe: Stripe;
  perDay: number;
  timeZone: string;
  mailer: Mailer | null;
  log: Logger;
  pollMs?: number;
}

export class RechargeRunner {
  private listener: Listener;
  private timer: NodeJS.Timeout | null = null;
  private busy = new Set<string>();
  private running = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(private o: RunnerOptions) {
    this.listener = new Listener(
      o.databaseUrl,
      [RECHARGE_CHANNEL],
      (_ch, accountId) => this.track(this.forAccount(accountId)),
      () => this.track(this.sweep()),
      (m) => o.log.warn(m),
    );
  }

  async start() {
    await this.listener.start();
    const tick = () => {
      if (this.stopped) return;
      this.track(this.sweep());
      this.timer = setTimeout(tick, this.o.pollMs ?? POLL_MS);
    };
    this.timer = setTimeout(tick, this.o.pollMs ?? POLL_MS);
  }

  async stop() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.listener.stop();
    await Promise.allSettled([...this.running]);
  }

  private track(p: Promise<unknown>) {
    const t = p.catch((e: unknown) => this.o.log.error({ err: e }, 'auto-recharge step failed'));
    this.running.add(t);
    void t.finally(() => this.running.delete(t));
  }

  /**
   * Everything due now: accounts below their threshold, calls never answered, and removed or
   * replaced cards Stripe has not detached yet (card-detach.ts).
   */
  async sweep(): Promise<void> {
    const due = await sweepDue(this.o.db, LEASE_S, 100);
    for (const d of due) {
      if (this.stopped) return;
      if (d.account_id) await this.forAccount(d.account_id);
      else if (d.recharge_id) await this.call(d.recharge_id);
    }
    for (const pm of await dueDetaches(this.o.db, 20)) {
      if (this.stopped) return;
      await detachCard(this.o.db, this.o.stripe, pm, this.o.log);
    }
  }

  /** Starts the account's recharge if one is due, and makes its call; one at a time per process. */
  async forAccount(accountId: string): Promise<void> {
    if (this.busy.has(accountId) || this.stopped) return;
    this.busy.add(accountId);
    try {
      const started = await transaction(this.o.db, async (tx) => {
        const s = await lockAutoRecharge(tx, accountId);
        if (!s.enabled || !s.paymentMethod || !s.customerId) return null;
        return startRecharge(tx, {
          id: newId('arc'),
          accountId,
          amountCents: s.amountCents!,
          customerId: s.customerId,
          paymentMethod: s.paymentMethod,
          belowCents: s.belowCents!,
          perDay: this.o.perDay,
          timeZone: this.o.timeZone,
        });
      });
      if (started) await this.call(started.id);
    } finally {
      this.busy.delete(accountId);
    }
  }

  /** Asks Stripe for the recharge's payment, if no other process is asking now. */
  async call(rechargeId: string): Promise<void> {
    const r = await leaseRecharge(this.o.db, rechargeId, LEASE_S);
    if (!r) return;
    let pi: Stripe.PaymentIntent;
    try {
      pi = await this.o.stripe.paymentIntents.create(
        {
          amount: r.amountCents,
          currency: 'eur',
          customer: r.customerId,
          payment_method: r.paymentMethod,
          off_session: true,
          confirm: true,
          metadata: { rendergate_account: r.accountId, rendergate_recharge: r.id },
          expand: ['latest_charge'],
        },
        { idempotencyKey: r.id },
      );
    } catch (e) {
      return this.refused(r, e as Stripe.errors.StripeError);
    }
    await this.answered(r, pi);
  }

  private async answered(r: RechargeRow, pi: Stripe.PaymentIntent) {
    if (pi.status === 'succeeded') {
      const charge = typeof pi.latest_charge === 'object' ? pi.latest_charge : null;
      await transaction(this.o.db, (tx) =>
        rechargeSucceeded(tx, {
          rechargeId: r.id,
          paymentIntent: pi.id,
          amountCents: pi.amount,
          currency: pi.currency,
          receiptUrl: charge?.receipt_url ?? null,
        }),
      );
    } else if (pi.status === 'processing') {
      // Stripe's payment_intent.succeeded or payment_failed event settles it.
    } else {
      const why =
        pi.status === 'requires_action'
          ? 'the bank asks the card holder to confirm the payment (requires_action)'
          : `the payment ended ${pi.status}`;
      await this.fail(r, pi.id, why);
    }
  }

  /** A decline (402) or a refusal (400) ends the recharge; anything else is retried later. */
  private async refused(r: RechargeRow, e: Stripe.errors.StripeError) {
    const status = e?.statusCode;
    if (status === 402 || status === 400) {
      const pi = e.payment_intent?.id ?? null;
      const code = e.decline_code || e.code || 'refused';
      await this.fail(r, pi, `Stripe refused the card payment: ${e.message} (${code})`);
      return;
    }
    this.o.log.warn(
      { recharge: r.id, err: { type: e?.type, message: e?.message } },
      'auto-recharge call unanswered: retried after its lease',
    );
  }

  private async fail(r: RechargeRow, paymentIntent: string | null, why: string) {
    const off = await transaction(this.o.db, (tx) =>
      rechargeFailed(tx, { rechargeId: r.id, paymentIntent, why }),
    );
    if (off) await mailRechargeOff(this.o.db, this.o.mailer, off.accountId, why, this.o.log);
  }
}

/** The mail to the owners and billing members that auto-recharge was turned off, and why. */
export async function mailRechargeOff(
  db: Db,
  mailer: Mailer | null,
  accountId: string,
  why: string,
  log: Logger,
) {
  const to = await billingContacts(db, accountId);
  await mailBillingContacts(
    mailer,
    to,
    'Auto-recharge is off',
    `An automatic recharge of your Rendergate account ${accountId} did not go through, so ` +
      `auto-recharge has been turned off.\n\nWhy: ${why}\n\nAdd credit or save another card on ` +
      'the Add credit page, then turn auto-recharge on again.',
  ).catch((e: unknown) => log.warn({ err: e }, 'auto-recharge notice not mailed'));
}
