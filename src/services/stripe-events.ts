// Stripe's events at POST /webhooks/stripe (docs/billing.md "Money rules"). The signature is
// checked by the library itself over the raw body; only then is the body read, and its shape
// checked (stripe-event-shape.ts: anything unexpected is a 400, nothing written). Each event is
// handled in one transaction with its record in stripe_events, committed before the answer:
// - Checkout Session events (stripe-checkout.ts): a paid session of ours credits its amount once;
// a failed asynchronous payment is remembered;
// - refunds and disputes (stripe-settle.ts): kept as facts of their payment, and the payment's
// top-up, once credited, brought to what they say: a `reversal`, or a won dispute's `credit`;
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
    },
  ) {}

  /**
   * Verifies and applies one delivery; the outcome is recorded. 400 INVALID_REQUEST when the
   * signature fails or the event is not of a shape Stripe sends.
   */
  async receive(raw: Buffer, signature: string | undefined): Promise<StripeOutcome> {
    const event = parseStripeEvent(this.verified(raw, signature));
    return transaction(this.o.db, async (tx) => {
      const h = await this.handle(tx, event);
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

  private handle(tx: Tx, e: StripeEventIn): Promise<Handled> {
    switch (e.kind) {
      case 'session':
        return onSession(tx, e.type, e.session, this.o.offered);
      case 'charge':
        return onRefund(tx, e.charge);
      case 'dispute':
        return onDispute(tx, e.type, e.dispute);
      case 'other':
        return Promise.resolve({
          outcome: 'ignored',
          detail: null,
          accountId: null,
          sessionId: null,
          amountCents: null,
        });
    }
  }
}
