// Top-ups through Stripe Checkout (docs/billing.md): the account owner picks one of the configured
// amounts, we create a Checkout Session with the official `stripe` client and send the browser to it;
// Stripe's signed events (stripe-events.ts) credit the account. A success page waits for that credit on
// the same change notifications `Prefer: wait` uses.
import Stripe from 'stripe';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { StripeConfig } from '../config/stripe.ts';
import type { Db } from '../db/pool.ts';
import { ApiError } from '../domain/errors.ts';
import { topupOf, type TopupRow } from '../db/topups.ts';
import type { Waiters } from '../admission/waiters.ts';
import { StripeEvents } from './stripe-events.ts';
import { CheckoutSessions } from './checkout-sessions.ts';
import { AutoRecharge } from './auto-recharge.ts';
import { RechargeRunner } from './auto-recharge-run.ts';
import type { Mailer } from './mail.ts';
import { accountFor } from '../domain/authorize.ts';
import type { Principal } from '../domain/principal.ts';

/** Stripe's own tolerance for the age of a signed event, in seconds. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export class Topups {
  readonly amounts: number[];
  /** The origin Checkout pages are served from: the Add credit page's form may post (and redirect) there. */
  readonly checkoutOrigin: string;
  readonly events: StripeEvents;
  /** Save a card, and the recharges it pays (docs/billing.md "Auto-recharge"). */
  readonly autoRecharge: AutoRecharge;
  private stripe: Stripe;
  private sessions: CheckoutSessions;

  constructor(
    private o: {
      db: Db;
      stripe: StripeConfig;
      publicUrl: string;
      waiters: Waiters;
      log: Logger;
      mailer: Mailer | null;
      perDay: number;
      timeZone: string;
    },
  ) {
    this.amounts = o.stripe.topupAmounts;
    this.checkoutOrigin = o.stripe.checkoutOrigin;
    this.stripe = new Stripe(o.stripe.secretKey, {
      ...(o.stripe.api ?? {}),
      // One retry (the library's, under the session's own Idempotency-Key), then a clear
      // message: a person waits.
      maxNetworkRetries: 1,
      timeout: 15_000,
      telemetry: false,
    });
    this.events = new StripeEvents({
      db: o.db,
      stripe: this.stripe,
      webhookSecret: o.stripe.webhookSecret,
      toleranceSeconds: SIGNATURE_TOLERANCE_SECONDS,
      offered: this.amounts,
      log: o.log,
      mailer: o.mailer,
    });
    this.sessions = new CheckoutSessions({ db: o.db, stripe: this.stripe, log: o.log });
    this.autoRecharge = new AutoRecharge({
      db: o.db,
      stripe: this.stripe,
      sessions: this.sessions,
      offered: this.amounts,
      perDay: o.perDay,
      publicUrl: o.publicUrl,
      log: o.log,
    });
  }

  /** The recharges' runner a worker starts (auto-recharge-run.ts). */
  recharges(databaseUrl: string, pollMs?: number): RechargeRunner {
    return new RechargeRunner({
      db: this.o.db,
      databaseUrl,
      // Its own client: a call left unanswered is retried by the runner after its lease, under
      // the same Idempotency-Key, rather than held by the library's retries.
      stripe: new Stripe(this.o.stripe.secretKey, {
        ...(this.o.stripe.api ?? {}),
        maxNetworkRetries: 0,
        timeout: 20_000,
        telemetry: false,
      }),
      perDay: this.o.perDay,
      timeZone: this.o.timeZone,
      mailer: this.o.mailer,
      log: this.o.log,
      pollMs,
    });
  }

  /**
   * Creates a Checkout Session of `amountCents` for the account and returns its URL. An amount
   * that is not offered is refused before Stripe is asked, and so is an account past its sessions
   * an hour (429, checkout-sessions.ts); Stripe unreachable (or refusing) is a 503 whose message
   * says nothing was charged. Only the session is recorded here: only the paid event credits.
   */
  async startCheckout(p: Principal, amountCents: number): Promise<string> {
    const accountId = accountFor(p, 'credit.add');
    if (!this.amounts.includes(amountCents)) {
      throw new ApiError('INVALID_INPUT', 'Choose one of the amounts offered.', [
        { field: 'amount', message: 'not an offered amount' },
      ]);
    }
    const base = this.o.publicUrl;
    const session = await this.sessions.create(accountId, 'payment', amountCents, {
      line_items: [
        {
          quantity: 1,
          price_data: {
            currency: 'eur',
            unit_amount: amountCents,
            product_data: { name: 'Rendergate credit' },
          },
        },
      ],
      success_url: `${base}/credit/success?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${base}/credit?cancelled=1`,
    });
    if (!session.url)
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        'Stripe answered without a payment page; nothing was charged.',
      );
    if (new URL(session.url).origin !== this.checkoutOrigin) {
      this.o.log.warn(
        { origin: new URL(session.url).origin },
        'Checkout page on an unexpected origin: the browser will refuse it',
      );
    }
    return session.url;
  }

  /**
   * The account's top-up of `sessionId` once credited, waiting up to `seconds` for its credit (woken by
   * the notification the credit sends); null if it has not arrived by then.
   */
  async waitCredited(
    p: Principal,
    sessionId: string,
    seconds: number,
    closed: AbortSignal,
  ): Promise<TopupRow | null> {
    const accountId = accountFor(p, 'ledger.view');
    const read = () => topupOf(this.o.db, accountId, sessionId);
    const watched = await this.o.waiters.watch(
      `topup:${sessionId}`,
      { seconds, closed, accountId },
      read,
      (row) => row !== null,
    );
    if (!watched) return read();
    return watched.timedOut ? read() : watched.value;
  }
}

/** The top-ups service when Stripe is configured; null otherwise (no Add credit, /webhooks/stripe 404). */
export function createTopups(o: {
  db: Db;
  config: Config;
  waiters: Waiters;
  log: Logger;
  mailer: Mailer | null;
}): Topups | null {
  if (!o.config.stripe) return null;
  return new Topups({
    db: o.db,
    stripe: o.config.stripe,
    publicUrl: o.config.publicUrl,
    waiters: o.waiters,
    log: o.log,
    mailer: o.mailer,
    perDay: o.config.billing.autoRechargePerDay,
    timeZone: o.config.dayTimeZone,
  });
}
