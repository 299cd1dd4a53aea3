// A saved card (docs/billing.md "Auto-recharge"): the checkout.session.completed event of a
// Checkout Session in setup mode that this service created stores the card of its SetupIntent
// for the account the session was made for, and only for that account's own Stripe customer.
// A card it replaces is queued for detaching at Stripe (card-detach.ts), as Remove card's is.
// The SetupIntent is read from Stripe before the event's transaction (cardOfSetup), so no call
// to Stripe is made while rows are locked.
import type Stripe from 'stripe';
import type { Tx } from '../db/pool.ts';
import { ApiError } from '../domain/errors.ts';
import { lockCheckoutSession } from '../db/checkout-sessions.ts';
import { lockAutoRecharge, saveCard } from '../db/auto-recharge.ts';
import { queueDetach } from '../db/card-detachments.ts';
import { recordAudit } from '../audit/record.ts';
import { SYSTEM } from '../domain/principal.ts';
import type { SessionIn } from './stripe-event-shape.ts';
import type { Handled } from './stripe-settle.ts';

export interface SetupCard {
  paymentMethod: string;
  brand: string;
  last4: string;
}

/** The card a SetupIntent saved; a 503 (Stripe delivers the event again) when Stripe fails. */
export async function cardOfSetup(stripe: Stripe, setupIntent: string): Promise<SetupCard | null> {
  let si: Stripe.SetupIntent;
  try {
    si = await stripe.setupIntents.retrieve(setupIntent, { expand: ['payment_method'] });
  } catch {
    throw new ApiError('SERVICE_UNAVAILABLE', 'Stripe could not be asked for the saved card.');
  }
  const pm = si.payment_method;
  if (si.status !== 'succeeded' || !pm || typeof pm === 'string' || !pm.card) return null;
  return { paymentMethod: pm.id, brand: pm.card.brand, last4: pm.card.last4 };
}

export async function onSetupSession(
  tx: Tx,
  s: SessionIn,
  card: SetupCard | null,
): Promise<Handled> {
  const rec = { accountId: null, sessionId: s.id, amountCents: null };
  const row = await lockCheckoutSession(tx, s.id, s.checkoutRef);
  if (!row || row.mode !== 'setup')
    return { ...rec, outcome: 'ignored', detail: 'not a setup session this server created' };
  const accountId = row.accountId;
  const done = (outcome: Handled['outcome'], detail: string) => ({
    ...rec,
    accountId,
    outcome,
    detail,
  });
  if (!card) return done('refused', 'its SetupIntent saved no card');
  const settings = await lockAutoRecharge(tx, accountId);
  if (!s.customer || s.customer !== settings.customerId)
    return done('refused', "the session's customer is not the account's");
  if (settings.paymentMethod === card.paymentMethod) return done('duplicate', 'card saved before');
  await saveCard(tx, { accountId, customerId: s.customer, ...card });
  // The card it replaces is forgotten here, and detached at Stripe by the runner.
  if (settings.paymentMethod)
    await queueDetach(tx, {
      paymentMethod: settings.paymentMethod,
      accountId,
      customerId: s.customer,
    });
  await recordAudit(tx, {
    account: accountId,
    action: 'auto_recharge.changed',
    actor: SYSTEM,
    target: null,
    details: { card: `${card.brand} ${card.last4}`, checkoutSession: s.id },
  });
  return done('ignored', `card ${card.brand} ${card.last4} saved for auto-recharge`);
}
