// Stripe's events at POST /webhooks/stripe (docs/billing.md "Money rules"). The signature is checked by
// the library itself over the raw body; only then is anything read or written. Each event is handled
// in one transaction with its record in stripe_events, committed before the answer:
// - a paid Checkout Session credits its amount once per session id (the topups primary key);
// - a refund or dispute of a top-up takes the amount back (a `reversal`), what the balance lacks
//   becoming the account's shortfall;
// - anything else is recorded as ignored.
import type Stripe from 'stripe';
import type { Logger } from 'pino';
import { transaction, type Db, type Tx } from '../db/pool.ts';
import { ApiError } from '../domain/errors.ts';
import { isId, newId } from '../domain/ids.ts';
import { accountById } from '../db/accounts.ts';
import { insertTopup, lockTopupByPayment, notifyTopup, setReversed } from '../db/topups.ts';
import {
  recordStripeEvent,
  type StripeEventRecord,
  type StripeOutcome,
} from '../db/stripe-events.ts';
import { creditIn, reverseIn } from '../ledger/ledger.ts';

type Recorded = Omit<StripeEventRecord, 'outcome' | 'detail'>;
const CREDITING = new Set([
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
]);

export class StripeEvents {
  constructor(
    private o: {
      db: Db;
      stripe: Stripe;
      webhookSecret: string;
      toleranceSeconds: number;
      log: Logger;
    },
  ) {}

  /** Verifies and applies one delivery; the outcome is recorded. 400 INVALID_REQUEST when the signature fails. */
  async receive(raw: Buffer, signature: string | undefined): Promise<StripeOutcome> {
    let event: Stripe.Event;
    try {
      if (!signature) throw new Error('no signature');
      event = this.o.stripe.webhooks.constructEvent(
        raw,
        signature,
        this.o.webhookSecret,
        this.o.toleranceSeconds,
      );
    } catch {
      throw new ApiError(
        'INVALID_REQUEST',
        'The Stripe-Signature header is missing, too old, or does not match the body.',
      );
    }
    const base: Recorded = {
      eventId: event.id,
      type: event.type,
      livemode: event.livemode,
      accountId: null,
      sessionId: null,
      amountCents: null,
    };
    return transaction(this.o.db, async (tx) => {
      const [outcome, detail, rec] = CREDITING.has(event.type)
        ? await this.credit(tx, base, event.data.object as Stripe.Checkout.Session)
        : event.type === 'charge.refunded' || event.type === 'charge.dispute.created'
          ? await this.reverse(tx, base, event)
          : ['ignored' as const, null, base];
      await recordStripeEvent(tx, { ...rec, outcome, detail });
      if (outcome === 'refused')
        this.o.log.warn(
          { eventId: event.id, type: event.type, detail },
          'Stripe event not applied',
        );
      return outcome;
    });
  }

  private async credit(
    tx: Tx,
    base: Recorded,
    s: Stripe.Checkout.Session,
  ): Promise<[StripeOutcome, string | null, Recorded]> {
    const accountId = s.client_reference_id ?? s.metadata?.rendergate_account ?? null;
    const amount = s.amount_total;
    const rec = { ...base, accountId, sessionId: s.id, amountCents: amount };
    if (base.type === 'checkout.session.completed' && s.payment_status !== 'paid') {
      return [
        'ignored',
        `payment_status ${s.payment_status}: credited when the payment succeeds`,
        rec,
      ];
    }
    if (
      s.mode !== 'payment' ||
      s.currency !== 'eur' ||
      amount === null ||
      !Number.isSafeInteger(amount) ||
      amount <= 0
    ) {
      return [
        'refused',
        `not a euro payment (mode ${s.mode}, currency ${s.currency}, amount ${amount})`,
        rec,
      ];
    }
    if (!accountId || !isId('acct', accountId) || !(await accountById(tx, accountId))) {
      return ['refused', 'not credited: no such account', rec];
    }
    const entryId = newId('led');
    const paymentIntent =
      typeof s.payment_intent === 'string' ? s.payment_intent : (s.payment_intent?.id ?? null);
    if (
      !(await insertTopup(tx, {
        sessionId: s.id,
        accountId,
        amountCents: amount,
        paymentIntent,
        creditEntryId: entryId,
      }))
    ) {
      return ['duplicate', 'this session was credited before', rec];
    }
    // Past the largest balance throws: nothing is written and the 500 makes Stripe deliver it again.
    await creditIn(tx, {
      accountId,
      amountCents: amount,
      reason: `Stripe Checkout ${s.id}`,
      entryId,
    }).catch((e: unknown) => {
      throw new Error(`credit of ${s.id} not applied`, { cause: e });
    });
    await notifyTopup(tx, s.id);
    return ['credited', null, rec];
  }

  private async reverse(
    tx: Tx,
    base: Recorded,
    event: Stripe.Event,
  ): Promise<[StripeOutcome, string | null, Recorded]> {
    const refund = event.type === 'charge.refunded';
    const obj = event.data.object as Stripe.Charge | Stripe.Dispute;
    const pi =
      typeof obj.payment_intent === 'string'
        ? obj.payment_intent
        : (obj.payment_intent?.id ?? null);
    // Cumulative: a charge's amount_refunded grows with each refund; a dispute is for its amount.
    const asked = refund ? (obj as Stripe.Charge).amount_refunded : (obj as Stripe.Dispute).amount;
    const topup = pi ? await lockTopupByPayment(tx, pi) : null;
    if (!topup) return ['ignored', 'not a payment of a top-up', { ...base, amountCents: asked }];
    const rec = {
      ...base,
      accountId: topup.accountId,
      sessionId: topup.sessionId,
      amountCents: asked,
    };
    const before = refund ? topup.refundedCents : topup.disputedCents;
    const left = topup.amountCents - topup.refundedCents - topup.disputedCents;
    const delta = Math.min(Math.max(0, Math.min(asked, topup.amountCents) - before), left);
    if (delta <= 0) return ['duplicate', 'already taken back', rec];
    const what = refund ? 'refund' : 'dispute';
    const r = await reverseIn(tx, {
      accountId: topup.accountId,
      amountCents: delta,
      reason: `Stripe ${what} of Checkout ${topup.sessionId}`,
    });
    await setReversed(tx, topup.sessionId, {
      refundedCents: topup.refundedCents + (refund ? delta : 0),
      disputedCents: topup.disputedCents + (refund ? 0 : delta),
    });
    const detail =
      `${what}: took ${r.takenCents} cents` +
      (r.shortfallCents > 0 ? `, shortfall ${r.shortfallCents} cents` : '');
    return ['reversed', detail, { ...rec, amountCents: delta }];
  }
}
