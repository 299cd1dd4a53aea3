// Stripe's events at POST /webhooks/stripe (docs/billing.md "Money rules"). The signature is
// checked by the library itself over the raw body; only then is the body read, and its shape
// checked (stripe-event-shape.ts: anything unexpected is a 400, nothing written). Each event is
// handled in one transaction with its record in stripe_events, committed before the answer:
// - Checkout Session events (stripe-checkout.ts): a paid session of ours credits its amount once;
// a failed asynchronous payment is remembered;
// - refunds and disputes (stripe-settle.ts): kept as facts of their payment, and the payment's
// top-up, once credited, brought to what they say: a `reversal`, or a won dispute's `credit`;
// - a setup session's completion saves its card (stripe-setup.ts), and payment_intent.* events
//   settle an auto-recharge as its call's answer would (auto-recharge-outcomes.ts);
// - once a payment's credit is committed, Stripe's receipt page is linked to its receipt
//   (stripe-receipt-link.ts), outside the event's transaction;
// - anything else is recorded as ignored. Stripe does not promise order and delivers an event
//   again until it gets a 2xx: every event is applied so that any order, any repetition and any
//   concurrency give the same ledger.
import type Stripe from 'stripe';
import type { Logger } from 'pino';
import { transaction, type Db, type Tx } from '../db/pool.ts';
import { ApiError } from '../domain/errors.ts';
import { recordStripeEvent, type StripeOutcome } from '../db/stripe-events.ts';
import { parseStripeEvent, type StripeEventIn } from './stripe-event-shape.ts';
import { onDispute, onRefund, type Handled } from './stripe-settle.ts';
import { onSession } from './stripe-checkout.ts';
import { cardOfSetup, onSetupSession, type SetupCard } from './stripe-setup.ts';
import { rechargeFailed, rechargeSucceeded } from './auto-recharge-outcomes.ts';
import { mailRechargeOff } from './auto-recharge-run.ts';
import { linkReceiptOfPayment } from './stripe-receipt-link.ts';
import type { Mailer } from './mail.ts';

export class StripeEvents {
  constructor(
    private o: {
      db: Db;
      stripe: Stripe;
      webhookSecret: string;
      toleranceSeconds: number;
      /** The amounts offered (a session the previous release made is credited only at one). */
      offered: number[];
      log: Logger;
      /** Where the notice of auto-recharge turned off goes (null: no mail). */
      mailer?: Mailer | null;
    },
  ) {}

  /**
   * Verifies and applies one delivery; the outcome is recorded. 400 INVALID_REQUEST when the
   * signature fails or the event is not of a shape Stripe sends.
   */
  async receive(raw: Buffer, signature: string | undefined): Promise<StripeOutcome> {
    const event = parseStripeEvent(this.verified(raw, signature));
    const s = event.kind === 'session' ? event.session : null;
    const card =
      s?.mode === 'setup' && s.setupIntent && event.type === 'checkout.session.completed'
        ? await cardOfSetup(this.o.stripe, s.setupIntent)
        : null;
    let turnedOff: { accountId: string; why: string } | null = null;
    const outcome = await transaction(this.o.db, async (tx) => {
      const h = await this.handle(tx, event, card, (off) => (turnedOff = off));
      await recordStripeEvent(tx, {
        eventId: event.id,
        type: event.type,
        livemode: event.livemode,
        ...h,
      });
      if (h.outcome === 'refused')
        this.o.log.warn(
          { eventId: event.id, type: event.type, detail: h.detail },
          'Stripe event not applied',
        );
      return h.outcome;
    });
    const off = turnedOff as { accountId: string; why: string } | null;
    if (off)
      await mailRechargeOff(this.o.db, this.o.mailer ?? null, off.accountId, off.why, this.o.log);
    await this.linkReceipt(event, outcome);
    return outcome;
  }

  /**
   * After a credit of a Stripe payment is committed (or an event of a payment credited before
   * comes again), Stripe's receipt page linked to its receipt if it has none yet
   * (stripe-receipt-link.ts). Never fails the event: the credit is already in.
   */
  private async linkReceipt(event: StripeEventIn, outcome: StripeOutcome) {
    if (outcome !== 'credited' && outcome !== 'duplicate') return;
    const pi =
      event.kind === 'session'
        ? event.session.paymentIntent
        : event.kind === 'payment_intent' && event.type === 'payment_intent.succeeded'
          ? event.paymentIntent.id
          : null;
    if (!pi) return;
    await linkReceiptOfPayment(this.o.db, this.o.stripe, pi, this.o.log).catch((e: unknown) =>
      this.o.log.warn({ err: e, paymentIntent: pi }, "Stripe's receipt not linked"),
    );
  }

  /** The body as JSON, once the library found its signature right. */
  private verified(raw: Buffer, signature: string | undefined): unknown {
    const check = this.o.stripe.webhooks.signature;
    try {
      if (!signature || !check) throw new Error('no signature');
      check.verifyHeader(raw, signature, this.o.webhookSecret, this.o.toleranceSeconds);
    } catch {
      throw new ApiError(
        'INVALID_REQUEST',
        'The Stripe-Signature header is missing, too old, or does not match the body.',
      );
    }
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch {
      throw new ApiError('INVALID_REQUEST', 'The signed body is not JSON.');
    }
  }

  private async handle(
    tx: Tx,
    e: StripeEventIn,
    card: SetupCard | null,
    onOff: (off: { accountId: string; why: string }) => void,
  ): Promise<Handled> {
    switch (e.kind) {
      case 'session':
        if (e.session.mode === 'setup') {
          if (e.type !== 'checkout.session.completed') return nothing();
          return onSetupSession(tx, e.session, card);
        }
        return onSession(tx, e.type, e.session, this.o.offered);
      case 'payment_intent': {
        const pi = e.paymentIntent;
        if (!pi.rechargeRef) return nothing();
        if (e.type === 'payment_intent.succeeded')
          return rechargeSucceeded(tx, {
            rechargeId: pi.rechargeRef,
            paymentIntent: pi.id,
            amountCents: pi.amount,
            currency: pi.currency,
            receiptUrl: null,
          });
        const why = `Stripe: the payment failed${pi.failure ? `: ${pi.failure}` : ''}`;
        const off = await rechargeFailed(tx, {
          rechargeId: pi.rechargeRef,
          paymentIntent: pi.id,
          why,
        });
        if (off) onOff({ accountId: off.accountId, why });
        return {
          outcome: off ? 'refused' : 'duplicate',
          detail: off ? `auto-recharge turned off: ${why}` : 'seen before, or settled',
          accountId: off?.accountId ?? null,
          sessionId: pi.rechargeRef,
          amountCents: pi.amount,
        };
      }
      case 'charge':
        return onRefund(tx, e.charge);
      case 'dispute':
        return onDispute(tx, e.type, e.dispute);
      case 'other':
        return nothing();
    }
  }
}

const nothing = (): Handled => ({
  outcome: 'ignored',
  detail: null,
  accountId: null,
  sessionId: null,
  amountCents: null,
});
