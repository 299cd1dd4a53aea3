// Creating Stripe Checkout Sessions (docs/billing.md): every mode (a top-up's `payment`, a saved
// card's `setup`) goes through here, so each is recorded before Stripe is asked and all share one
// bound: at most CHECKOUT_SESSIONS_PER_HOUR per account in any hour, across every process (the
// guarded insert of db/checkout-sessions.ts). A creation refused by the bound never reaches
// Stripe, so one account cannot spend the operator's Stripe API quota. Stripe's events credit only
// the sessions recorded here, at the amount recorded (stripe-checkout.ts).
import type Stripe from 'stripe';
import type { Logger } from 'pino';
import type { Db } from '../db/pool.ts';
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import {
  linkCheckoutSession,
  reserveCheckoutSession,
  type CheckoutMode,
} from '../db/checkout-sessions.ts';

export const CHECKOUT_SESSIONS_PER_HOUR = 10;
const HOUR_S = 3600;

type Params = Omit<Stripe.Checkout.SessionCreateParams, 'mode' | 'client_reference_id'>;

/** The refusal past the bound: 429 with Retry-After, saying when a session can be made again. */
export function tooManySessions(retryAt: Date, nowMs = Date.now()): ApiError {
  const seconds = Math.max(1, Math.ceil((retryAt.getTime() - nowMs) / 1000));
  const minutes = Math.ceil(seconds / 60);
  const at = retryAt.toISOString().slice(11, 16);
  return new ApiError(
    'RATE_LIMITED',
    `This account started ${CHECKOUT_SESSIONS_PER_HOUR} payments in the last hour, the most ` +
      `allowed. Try again in ${minutes} minute${minutes === 1 ? '' : 's'} (at ${at} UTC).`,
    undefined,
    { 'retry-after': String(seconds) },
  );
}

export class CheckoutSessions {
  constructor(private o: { db: Db; stripe: Stripe; log: Logger }) {}

  /**
   * Records a session of `mode` for the account (429 RATE_LIMITED past the bound), then creates it
   * at Stripe with our row's id as its Idempotency-Key and metadata[rendergate_checkout]: a retry
   * never makes a second one, and a session whose answer was lost is still known by its events.
   * Stripe unreachable, or refusing, is a 503 saying nothing was charged.
   */
  async create(
    accountId: string,
    mode: CheckoutMode,
    amountCents: number | null,
    params: Params,
  ): Promise<Stripe.Checkout.Session> {
    const id = newId('chk');
    const r = await reserveCheckoutSession(this.o.db, {
      id,
      accountId,
      mode,
      amountCents,
      max: CHECKOUT_SESSIONS_PER_HOUR,
      windowS: HOUR_S,
    });
    if (!r.ok) throw tooManySessions(r.retryAt);
    let session: Stripe.Checkout.Session;
    try {
      session = await this.o.stripe.checkout.sessions.create(
        {
          ...params,
          mode,
          client_reference_id: accountId,
          metadata: { ...params.metadata, rendergate_account: accountId, rendergate_checkout: id },
        },
        { idempotencyKey: id },
      );
    } catch (err) {
      this.o.log.warn(
        { err: { type: (err as Error).name, message: (err as Error).message } },
        'Stripe Checkout Session not created',
      );
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        'Payments cannot be taken right now: Stripe could not be reached. ' +
          'Nothing was charged; try again in a few minutes.',
      );
    }
    await linkCheckoutSession(this.o.db, id, session.id);
    return session;
  }
}
