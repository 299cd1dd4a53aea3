// Detaching a forgotten card from the account's Stripe customer (docs/billing.md "Auto-recharge"),
// after Stripe's POST /v1/payment_methods/{id}/detach: detachment is permanent, so no charge can
// use the card again, ours or anyone's holding the key. The card is forgotten in our database first
// (in the transaction of Remove card, with its audit event and its card_detachments row), so from
// that commit on no recharge of ours can use it whatever Stripe does; this call then tells Stripe,
// at once from Remove card, and again from the worker's auto-recharge runner while Stripe fails.
import type Stripe from 'stripe';
import type { Logger } from 'pino';
import type { Db } from '../db/pool.ts';
import { leaseDetach, markDetached, noteDetachError } from '../db/card-detachments.ts';

/** A person waits on Remove card's own try: a short bound, no retry (the runner retries). */
export const DETACH_REQUEST = { timeout: 8_000, maxNetworkRetries: 0 };

/**
 * Asks Stripe to detach `paymentMethod` if its call is due (leased here); true once it is
 * detached. Stripe's 404 (no such PaymentMethod) and 400 (not attached to a customer: detached
 * before, perhaps by a call whose answer was lost) mean there is nothing left attached, so they
 * count as done. Anything else (unreachable, 5xx, 429, a key refused) is kept for a later try.
 */
export async function detachCard(
  db: Db,
  stripe: Stripe,
  paymentMethod: string,
  log?: Pick<Logger, 'warn'>,
): Promise<boolean> {
  const d = await leaseDetach(db, paymentMethod);
  if (!d) return false;
  try {
    await stripe.paymentMethods.detach(paymentMethod, {}, DETACH_REQUEST);
  } catch (e) {
    const err = e as Stripe.errors.StripeError;
    if (err?.statusCode !== 404 && err?.statusCode !== 400) {
      const status = err?.statusCode ?? 'unreachable';
      const why = `Stripe ${status} ${err?.type ?? 'error'}: ${err?.message ?? String(e)}`;
      await noteDetachError(db, paymentMethod, why);
      log?.warn(
        { paymentMethod, attempts: d.attempts, err: { type: err?.type, message: err?.message } },
        'card not detached at Stripe yet: tried again later',
      );
      return false;
    }
  }
  await markDetached(db, paymentMethod);
  return true;
}
