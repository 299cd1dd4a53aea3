// A credited top-up brought to what Stripe's objects say of its payment (docs/billing.md "Money
// rules"), whatever order their events came in. Of the amount paid P, what is taken back is
// P                                   when the asynchronous payment failed,
// min(P, refunded + Σ open disputes)  otherwise, each term at most P: `refunded` the largest
// cumulative amount_refunded seen, an open dispute one whose funds were withdrawn and not
// reinstated. Those facts are kept as they come (stripe_payments, stripe_disputes,
// checkout_sessions.failed_at), credited or not, each only growing or turning true, so every order
// of the same events ends at the same target. The top-up's refunded_cents and disputed_cents hold
// what was applied; an event moves only the difference: a `reversal` when more is owed, a `credit`
// when a won dispute gives its part back. Every event about a payment holds that payment's row
// lock (lockPayment) first, so they apply one at a time.
import type { Tx } from '../db/pool.ts';
import { checkoutFailed } from '../db/checkout-sessions.ts';
import { lockTopupByPayment, setReversed, type TopupRow } from '../db/topups.ts';
import { lockPayment, noteDispute, openDisputes } from '../db/stripe-payments.ts';
import type { StripeOutcome } from '../db/stripe-events.ts';
import type { ChargeIn, DisputeIn } from './stripe-event-shape.ts';
import { reinstateIn, reverseIn } from '../ledger/ledger.ts';
import { recordAudit } from '../audit/record.ts';
import { SYSTEM } from '../domain/principal.ts';

/** What an event did, as recorded in stripe_events. */
export interface Handled {
  outcome: StripeOutcome;
  detail: string | null;
  accountId: string | null;
  sessionId: string | null;
  amountCents: number | null;
}

export interface Movement {
  outcome: 'reversed' | 'reinstated';
  cents: number;
  detail: string;
}

/**
 * Moves the top-up `t` (locked, its payment's row locked) to its target. `refundedCents`: the
 * largest refund seen. `reinstating`: the dispute this event reports won; only then may money come
 * back, so a state that an earlier release recorded without these facts never credits anything.
 * `reason`: the reversal's ledger reason. Null when nothing moves.
 */
export async function settleTopup(
  tx: Tx,
  t: TopupRow,
  o: { refundedCents: number; reinstating: string | null; reason: string },
): Promise<Movement | null> {
  const paid = t.amountCents;
  const cap = (n: number) => Math.min(paid, n);
  const failed = await checkoutFailed(tx, t.sessionId);
  const open = t.paymentIntent ? await openDisputes(tx, t.paymentIntent) : [];
  // What was applied as refunded is a floor: an earlier release applied refunds without these
  // rows.
  const refunded = cap(Math.max(o.refundedCents, t.refundedCents));
  const target = failed ? paid : cap(refunded + open.reduce((n, d) => n + cap(d), 0));
  const applied = t.refundedCents + t.disputedCents;
  const next = target < applied && !o.reinstating ? applied : target;
  const refundPart = Math.min(next, refunded);
  if (refundPart !== t.refundedCents || next !== applied) {
    await setReversed(tx, t.sessionId, {
      refundedCents: refundPart,
      disputedCents: next - refundPart,
    });
  }
  if (next > applied) {
    const r = await reverseIn(tx, {
      accountId: t.accountId,
      amountCents: next - applied,
      reason: o.reason,
    });
    await recordAudit(tx, {
      account: t.accountId,
      action: 'credit.reversed',
      actor: SYSTEM,
      target: r.entryId === null ? null : { type: 'ledger_entry', id: r.entryId },
      details: {
        amountCents: next - applied,
        takenCents: r.takenCents,
        shortfallCents: r.shortfallCents,
        reason: o.reason,
        checkoutSession: t.sessionId,
      },
    });
    const short = r.shortfallCents > 0 ? `, shortfall ${r.shortfallCents} cents` : '';
    return {
      outcome: 'reversed',
      cents: next - applied,
      detail: `took ${r.takenCents} cents${short}`,
    };
  }
  if (next < applied && o.reinstating) {
    const cents = applied - next;
    // Past the largest balance throws: nothing is written and the 500 makes Stripe deliver it
    // again.
    const c = await reinstateIn(tx, {
      accountId: t.accountId,
      amountCents: cents,
      disputeId: o.reinstating,
    }).catch((e: unknown) => {
      throw new Error(`reinstatement of ${o.reinstating} not applied`, { cause: e });
    });
    await recordAudit(tx, {
      account: t.accountId,
      action: 'credit.added',
      actor: SYSTEM,
      target: { type: 'ledger_entry', id: c.entryId },
      details: {
        amountCents: cents,
        via: 'stripe_dispute_won',
        dispute: o.reinstating,
        checkoutSession: t.sessionId,
      },
    });
    return { outcome: 'reinstated', cents, detail: `gave back ${cents} cents` };
  }
  return null;
}

/** Applies what is known of `paymentIntent` to its top-up; kept for later if none is credited. */
async function applyToTopup(
  tx: Tx,
  paymentIntent: string,
  refundedCents: number,
  o: { reinstating: string | null; reason: (sessionId: string) => string; news: boolean },
  amountCents: number,
): Promise<Handled> {
  const t = await lockTopupByPayment(tx, paymentIntent);
  if (!t) {
    return {
      outcome: 'kept',
      detail: `no top-up paid by ${paymentIntent} is credited yet: kept, applied if one is`,
      accountId: null,
      sessionId: null,
      amountCents,
    };
  }
  const m = await settleTopup(tx, t, {
    refundedCents,
    reinstating: o.reinstating,
    reason: o.reason(t.sessionId),
  });
  const rec = { accountId: t.accountId, sessionId: t.sessionId };
  if (m) return { ...rec, outcome: m.outcome, detail: m.detail, amountCents: m.cents };
  // Nothing moved: an event seen before, or news that moves no money (an inquiry, a win of a
  // dispute that took nothing, a dispute of money already refunded).
  return o.news
    ? { ...rec, outcome: 'ignored', detail: 'no money moves', amountCents }
    : { ...rec, outcome: 'duplicate', detail: 'seen before', amountCents };
}

/** charge.refunded: `amount_refunded` is cumulative, so the largest seen is what counts. */
export async function onRefund(tx: Tx, c: ChargeIn): Promise<Handled> {
  if (!c.paymentIntent) return noPayment(c.amountRefunded);
  const p = await lockPayment(tx, c.paymentIntent, c.amountRefunded);
  return applyToTopup(
    tx,
    c.paymentIntent,
    p.refundedCents,
    {
      reinstating: null,
      reason: (s) => `Stripe refund of Checkout ${s}`,
      news: p.raised,
    },
    c.amountRefunded,
  );
}

/** Dispute statuses once its funds were withdrawn; `warning_*` (inquiries) withdraw nothing. */
const WITHDRAWN = new Set(['needs_response', 'under_review', 'won', 'lost']);

/**
 * Any event of a dispute (created, updated, funds_withdrawn, closed, funds_reinstated): its funds
 * count as taken once an event shows them withdrawn, and as given back once one shows the dispute
 * won (status `won`, or funds_reinstated): so a won that comes before its dispute's creation never
 * credits money that was not taken, and the give-back happens once, whichever of the two is first.
 */
export async function onDispute(tx: Tx, type: string, d: DisputeIn): Promise<Handled> {
  if (!d.paymentIntent) return noPayment(d.amount);
  const { refundedCents } = await lockPayment(tx, d.paymentIntent);
  const withdrawn = type === 'charge.dispute.funds_withdrawn' || WITHDRAWN.has(d.status);
  const reinstated = type === 'charge.dispute.funds_reinstated' || d.status === 'won';
  const news = await noteDispute(tx, {
    disputeId: d.id,
    paymentIntent: d.paymentIntent,
    amountCents: d.amount,
    withdrawn,
    reinstated,
  });
  return applyToTopup(
    tx,
    d.paymentIntent,
    refundedCents,
    {
      reinstating: reinstated ? d.id : null,
      reason: (s) => `Stripe dispute ${d.id} of Checkout ${s}`,
      news,
    },
    d.amount,
  );
}

const noPayment = (amountCents: number): Handled => ({
  outcome: 'ignored',
  detail: 'names no PaymentIntent: not a payment of a top-up',
  accountId: null,
  sessionId: null,
  amountCents,
});
