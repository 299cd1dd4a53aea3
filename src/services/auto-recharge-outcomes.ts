// What a recharge's answer or event does (docs/billing.md "Auto-recharge"), the same whichever
// comes first: Stripe's answer to our PaymentIntent call (auto-recharge-run.ts) or its
// payment_intent.* event (stripe-events.ts). Locks in one order everywhere: the settings row, the
// recharge, the payment, the account (the ledger's), so a start waiting on the one in flight never
// waits on a transaction that waits on it.
//   succeeded  credited once: the guarded move to `succeeded` with its credit entry, the unique
//              PaymentIntent id, and a top-up row of the payment, so refunds and disputes of it
//              are applied as a Checkout top-up's are (stripe-settle.ts), in any order;
//   failed     (a decline, requires_action, payment_failed) auto-recharge turned off, audited;
//              the caller mails the owners and billing members after the commit.
import type { Tx } from '../db/pool.ts';
import { newId } from '../domain/ids.ts';
import { lockAutoRecharge, turnOff } from '../db/auto-recharge.ts';
import {
  accountOfRecharge,
  lockRecharge,
  markFailed,
  markSucceeded,
} from '../db/auto-recharges.ts';
import { lockPayment } from '../db/stripe-payments.ts';
import { insertTopup } from '../db/topups.ts';
import { creditIn } from '../ledger/ledger.ts';
import { linkStripeReceipt } from '../ledger/receipts.ts';
import { recordAudit } from '../audit/record.ts';
import { SYSTEM } from '../domain/principal.ts';
import { settleTopup, type Handled } from './stripe-settle.ts';

export interface Paid {
  rechargeId: string;
  paymentIntent: string;
  amountCents: number;
  currency: string | null;
  receiptUrl: string | null;
}

export async function rechargeSucceeded(tx: Tx, p: Paid): Promise<Handled> {
  const rec = { accountId: null, sessionId: p.rechargeId, amountCents: p.amountCents };
  const accountId = await accountOfRecharge(tx, p.rechargeId);
  if (!accountId) return { ...rec, outcome: 'ignored', detail: 'not a recharge of this server' };
  await lockAutoRecharge(tx, accountId);
  const r = (await lockRecharge(tx, p.rechargeId))!;
  const done = (outcome: Handled['outcome'], detail: string | null) => ({
    ...rec,
    accountId,
    outcome,
    detail,
  });
  if (r.status === 'succeeded') return done('duplicate', 'this recharge was credited before');
  if (p.amountCents !== r.amountCents || p.currency !== 'eur')
    return done('refused', `amount ${p.amountCents} ${p.currency}, made for ${r.amountCents} eur`);
  // The payment's lock before its top-up: an early refund or dispute is seen here or sees it.
  const refunded = (await lockPayment(tx, p.paymentIntent)).refundedCents;
  const entryId = newId('led');
  await markSucceeded(tx, r.id, p.paymentIntent, entryId);
  const topup = {
    sessionId: r.id,
    accountId,
    amountCents: r.amountCents,
    paymentIntent: p.paymentIntent,
    creditEntryId: entryId,
  };
  if (!(await insertTopup(tx, topup))) return done('duplicate', 'this payment was credited');
  const c = await creditIn(tx, {
    accountId,
    amountCents: r.amountCents,
    reason: `Stripe auto-recharge ${p.paymentIntent}`,
    entryId,
  });
  if (p.receiptUrl) await linkStripeReceipt(tx, entryId, p.receiptUrl);
  await recordAudit(tx, {
    account: accountId,
    action: 'auto_recharge.charged',
    actor: SYSTEM,
    target: { type: 'ledger_entry', id: entryId },
    details: {
      amountCents: r.amountCents,
      paymentIntent: p.paymentIntent,
      balanceCents: c.balanceCents,
    },
  });
  await settleTopup(
    tx,
    { ...topup, refundedCents: 0, disputedCents: 0, createdAt: new Date() },
    {
      refundedCents: refunded,
      reinstating: null,
      reason: `Stripe refund or dispute of auto-recharge ${p.paymentIntent}, before its credit`,
    },
  );
  return done('credited', `auto-recharge ${r.id}`);
}

export interface Failed {
  rechargeId: string;
  paymentIntent: string | null;
  why: string;
}

/** A failed recharge: null when nothing changed (seen before, or it succeeded). */
export async function rechargeFailed(tx: Tx, f: Failed): Promise<{ accountId: string } | null> {
  const accountId = await accountOfRecharge(tx, f.rechargeId);
  if (!accountId) return null;
  await lockAutoRecharge(tx, accountId);
  const r = (await lockRecharge(tx, f.rechargeId))!;
  if (r.status !== 'pending') return null;
  await markFailed(tx, r.id, f.paymentIntent, f.why);
  await turnOff(tx, accountId, f.why);
  await recordAudit(tx, {
    account: accountId,
    action: 'auto_recharge.failed',
    actor: SYSTEM,
    target: null,
    details: { amountCents: r.amountCents, paymentIntent: f.paymentIntent, why: f.why },
  });
  return { accountId };
}
