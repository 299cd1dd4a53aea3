// Stripe's own receipt page linked on the receipt of a credit its payment made (docs/billing.md
// "Receipts"). An auto-recharge's answer carries its charge (auto-recharge-outcomes.ts); a Checkout
// top-up's event, or a recharge's payment_intent.succeeded that came first, does not, so once that
// event's credit is committed the PaymentIntent is read with `expand[]=latest_charge` and its
// charge's `receipt_url` linked. The credit never waits on it or depends on it: a failed or slow
// read (bounded) leaves the receipt without a link, and the next delivery of an event of the same
// payment tries again (only while the link is missing, so nothing is asked twice once linked).
import type Stripe from 'stripe';
import type { Logger } from 'pino';
import type { Db } from '../db/pool.ts';
import { linkStripeReceiptOnce, unlinkedReceiptOfPayment } from '../ledger/receipts.ts';

/** Stripe's webhook waits on our answer, which waits on this read: a short bound, no retry. */
const READ = { timeout: 5_000, maxNetworkRetries: 0 };

/** The link of the receipt of `paymentIntent`'s credit, if missing; whether one was linked. */
export async function linkReceiptOfPayment(
  db: Db,
  stripe: Stripe,
  paymentIntent: string,
  log: Pick<Logger, 'warn'>,
): Promise<boolean> {
  const entryId = await unlinkedReceiptOfPayment(db, paymentIntent);
  if (!entryId) return false;
  let url: string | null = null;
  try {
    const pi = await stripe.paymentIntents.retrieve(
      paymentIntent,
      { expand: ['latest_charge'] },
      READ,
    );
    const charge = pi.latest_charge;
    url = charge && typeof charge === 'object' ? charge.receipt_url : null;
  } catch (e) {
    const err = e as Stripe.errors.StripeError;
    log.warn(
      { paymentIntent, err: { type: err?.type, message: err?.message } },
      "Stripe's receipt not read: the receipt shows no link to it",
    );
    return false;
  }
  // Only Stripe's own https pages are linked from our receipts and the studio.
  if (!url || !/^https:\/\/[^\s"<>]+$/.test(url)) return false;
  await linkStripeReceiptOnce(db, entryId, url);
  return true;
}
