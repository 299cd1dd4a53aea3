// Checkout Session events (docs/billing.md "Money rules"): a paid session credits its account
// once, only if this service created it (checkout_sessions) and only at the amount it was created
// with; in the same transaction the refunds and disputes of its payment that came before are
// applied (stripe-settle.ts), so the result is the one the events in order would have given. A
// failed asynchronous payment is remembered: the session is then never credited, and if a success
// event credited it before, that credit is taken back.
import type { Tx } from '../db/pool.ts';
import { isId, newId } from '../domain/ids.ts';
import { accountById } from '../db/accounts.ts';
import { readSetting } from '../db/server-settings.ts';
import {
  lockCheckoutSession,
  markCheckoutFailed,
  type CheckoutSessionRow,
} from '../db/checkout-sessions.ts';
import { insertTopup, lockTopupBySession, notifyTopup, topupOfSession } from '../db/topups.ts';
import { lockPayment } from '../db/stripe-payments.ts';
import type { SessionIn } from './stripe-event-shape.ts';
import { settleTopup, type Handled } from './stripe-settle.ts';
import { creditIn } from '../ledger/ledger.ts';
import { recordAudit } from '../audit/record.ts';
import { SYSTEM } from '../domain/principal.ts';

/** How long after recording began (migrations/024) a session not recorded may still count. */
const LEGACY_WINDOW_S = 24 * 3600;

type Rec = Omit<Handled, 'outcome' | 'detail'>;

export async function onSession(
  tx: Tx,
  type: string,
  s: SessionIn,
  offered: number[],
): Promise<Handled> {
  const rec: Rec = {
    accountId: s.accountRef,
    sessionId: s.id,
    amountCents: s.amountTotal,
  };
  const done = (outcome: Handled['outcome'], detail: string | null) => ({
    ...rec,
    outcome,
    detail,
  });
  if (type === 'checkout.session.completed' && s.paymentStatus !== 'paid') {
    const status = s.paymentStatus;
    return done('ignored', `payment_status ${status}: credited when the payment succeeds`);
  }
  const row = await lockCheckoutSession(tx, s.id, s.checkoutRef);
  if (type === 'checkout.session.async_payment_failed') {
    if (!row) return done('ignored', 'not a session this server created');
    return failed(tx, row, s, rec);
  }
  let accountId: string;
  if (row) {
    const wrong = mismatch(row, s);
    if (wrong) return done('refused', `not credited: ${wrong}`);
    if (row.failedAt) return done('refused', 'not credited: its payment failed before');
    accountId = row.accountId;
  } else {
    const why = await notLegacy(tx, s, offered);
    if (why) return done('refused', `not credited: ${why}`);
    accountId = s.accountRef!;
  }
  return credit(tx, s, accountId, s.amountTotal!, rec);
}

/** Why a paid session of ours cannot be credited as it is; null when it can. */
function mismatch(row: CheckoutSessionRow, s: SessionIn): string | null {
  if (row.mode !== 'payment' || s.mode !== 'payment')
    return `a ${row.mode} session is not paid for`;
  if (s.currency !== 'eur') return `currency ${s.currency}, not eur`;
  if (s.amountTotal !== row.amountCents)
    return `amount ${s.amountTotal}, created for ${row.amountCents}`;
  if (s.accountRef !== row.accountId)
    return 'it names another account than the one it was made for';
  return null;
}

/**
 * A session the previous release created is not recorded: it is credited as that release did (a
 * euro payment of an offered amount to an existing account) if Stripe made it within a day of
 * recording's start. Every session this release makes carries metadata[rendergate_checkout].
 */
async function notLegacy(tx: Tx, s: SessionIn, offered: number[]): Promise<string | null> {
  const since = Number(await readSetting(tx, 'checkout_sessions_recorded_since'));
  const early = s.created !== null && s.created <= since + LEGACY_WINDOW_S;
  if (s.checkoutRef || !early) return 'not a session this server created';
  if (s.mode !== 'payment' || s.currency !== 'eur' || !offered.includes(s.amountTotal ?? -1))
    return `not an offered euro payment (amount ${s.amountTotal})`;
  if (!s.accountRef || !isId('acct', s.accountRef) || !(await accountById(tx, s.accountRef)))
    return 'no such account';
  return null;
}

async function credit(
  tx: Tx,
  s: SessionIn,
  accountId: string,
  amountCents: number,
  rec: Rec,
): Promise<Handled> {
  // The payment's lock before the top-up is written: an early refund or dispute applies either
  // before (and is seen here) or after (and sees the top-up).
  const refunded = s.paymentIntent ? (await lockPayment(tx, s.paymentIntent)).refundedCents : 0;
  const entryId = newId('led');
  const topup = {
    sessionId: s.id,
    accountId,
    amountCents,
    paymentIntent: s.paymentIntent,
    creditEntryId: entryId,
  };
  if (!(await insertTopup(tx, topup))) {
    return { ...rec, outcome: 'duplicate', detail: 'this session was credited before' };
  }
  // Past the largest balance throws: nothing is written and the 500 makes Stripe deliver it again.
  await creditIn(tx, {
    accountId,
    amountCents,
    reason: `Stripe Checkout ${s.id}`,
    entryId,
  }).catch((e: unknown) => {
    throw new Error(`credit of ${s.id} not applied`, { cause: e });
  });
  await recordAudit(tx, {
    account: accountId,
    action: 'credit.added',
    actor: SYSTEM,
    target: { type: 'ledger_entry', id: entryId },
    details: { amountCents, via: 'stripe_checkout', checkoutSession: s.id },
  });
  const early = await settleTopup(
    tx,
    { ...topup, refundedCents: 0, disputedCents: 0, createdAt: new Date() },
    {
      refundedCents: refunded,
      reinstating: null,
      reason: `Stripe refund or dispute of Checkout ${s.id}, received before its credit`,
    },
  );
  await notifyTopup(tx, s.id);
  return {
    ...rec,
    outcome: 'credited',
    detail: early
      ? `then took back ${early.cents} cents (${early.detail}) for earlier events`
      : null,
  };
}

/** async_payment_failed: the session is never credited; a credit made before is taken back. */
async function failed(tx: Tx, row: CheckoutSessionRow, s: SessionIn, rec: Rec): Promise<Handled> {
  const first = await markCheckoutFailed(tx, row.id);
  const seen = await topupOfSession(tx, s.id);
  if (!seen) {
    return {
      ...rec,
      outcome: 'kept',
      detail: 'the payment failed: the session will not be credited',
    };
  }
  const refunded = seen.paymentIntent
    ? (await lockPayment(tx, seen.paymentIntent)).refundedCents
    : 0;
  const t = (await lockTopupBySession(tx, s.id))!;
  const m = await settleTopup(tx, t, {
    refundedCents: refunded,
    reinstating: null,
    reason: `Stripe payment failed for Checkout ${s.id}`,
  });
  const r = { ...rec, accountId: t.accountId };
  if (m) return { ...r, outcome: m.outcome, detail: `the payment failed: ${m.detail}` };
  return {
    ...r,
    outcome: 'duplicate',
    detail: first ? 'nothing left to take back' : 'seen before',
  };
}
