// The stand-in's saved cards and off-session payments, after Stripe's API reference
// (docs.stripe.com/api/customers/create, /api/setup_intents/retrieve, /api/payment_intents/create,
// /api/payment_methods/object, /api/errors, /testing#cards: `pm_card_visa` succeeds,
// `pm_card_chargeDeclined` is declined with a 402 `card_error` whose body carries the
// PaymentIntent, `pm_card_authenticationRequired` needs the customer: `requires_action`).
// - `POST /v1/customers` → a customer `cus_…` with its metadata.
// - A Checkout Session with `mode=setup`, once its hosted page's **Save card** is posted, has a
//   SetupIntent (`setup_intent`) whose payment method is a new PaymentMethod `pm_…` made from the
//   test card picked and attached to the session's customer (as Stripe makes one from a test
//   token: each setup its own id); `GET /v1/setup_intents/{id}` answers it,
//   `expand[]=payment_method` expanding the card.
// - `POST /v1/payment_intents` with `confirm=true&off_session=true` answers as the card does and
//   then sends `payment_intent.succeeded` or `payment_intent.payment_failed` to the webhook; a
//   repeated Idempotency-Key gets the first answer (and status) again and creates nothing. A
//   PaymentMethod not attached to that customer (detached: stripe-cards.ts) is refused with a 400,
//   as Stripe refuses a detached one.
import crypto from 'node:crypto';
import type http from 'node:http';
import { send } from './http-util.ts';
import { cardRoutes } from './stripe-cards.ts';

export const CARDS: Record<string, { brand: string; last4: string }> = {
  pm_card_visa: { brand: 'visa', last4: '4242' },
  pm_card_chargeDeclined: { brand: 'visa', last4: '0002' },
  pm_card_authenticationRequired: { brand: 'visa', last4: '3184' },
};

export interface OffSession {
  customers: Map<string, any>;
  setupIntents: Map<string, any>;
  paymentIntents: Map<string, any>;
  /** Saved cards: `pm_…` → { id, customer (null once detached), kind: the test card's name }. */
  paymentMethods: Map<string, { id: string; customer: string | null; kind: string }>;
  /** The charges of succeeded payments, each with its `receipt_url`. */
  charges: Map<string, any>;
  /**
   * This many detach calls fail, nothing done: with Stripe's error of `failDetachStatus` (500
   * `api_error`, 429 `rate_limit_error`…), or when that is 0 the connection closed (unreachable).
   */
  failDetach: number;
  failDetachStatus: number;
  /** This many PaymentIntent retrievals answer Stripe's 500 `api_error`. */
  failRetrieve: number;
  /** Held before each PaymentIntent answer (ms): recharges stay in flight meanwhile. */
  answerDelayMs: number;
  /** This many PaymentIntent answers are lost (the connection closed after the work was done). */
  loseAnswers: number;
  /** Whether the events of each PaymentIntent are sent (tests may deliver them themselves). */
  sendEvents: boolean;
  /** A setup session completed with `card` (pm_card_…): its SetupIntent and completed session. */
  completeSetup(session: any, card: string): any;
}

const rid = (prefix: string) => `${prefix}_${crypto.randomBytes(12).toString('hex')}`;

export function offSession(o: {
  event: (type: string, object: any) => any;
  deliver: (payload: string) => Promise<unknown>;
}) {
  const s: OffSession = {
    customers: new Map(),
    setupIntents: new Map(),
    paymentIntents: new Map(),
    paymentMethods: new Map(),
    charges: new Map(),
    failDetach: 0,
    failDetachStatus: 0,
    failRetrieve: 0,
    answerDelayMs: 0,
    loseAnswers: 0,
    sendEvents: true,
    completeSetup(session, card) {
      const pm = { id: rid('pm'), customer: session.customer, kind: card };
      s.paymentMethods.set(pm.id, pm);
      const si = {
        id: rid('seti'),
        object: 'setup_intent',
        status: 'succeeded',
        customer: session.customer,
        payment_method: pm.id,
        usage: 'off_session',
      };
      s.setupIntents.set(si.id, si);
      Object.assign(session, { status: 'complete', setup_intent: si.id });
      return { ...session, payment_status: 'no_payment_required' };
    },
  };
  const idempotent = new Map<string, { status: number; body: any }>();
  const later = (type: string, pi: any) => {
    if (!s.sendEvents) return;
    setTimeout(() => void o.deliver(JSON.stringify(o.event(type, pi))).catch(() => {}), 50);
  };

  function paymentIntent(params: any): { status: number; body: any } {
    if (params.confirm !== 'true' || params.off_session !== 'true' || !params.payment_method)
      return err(400, 'This stand-in takes confirmed off-session payments only.', 'confirm');
    if (!/^\d+$/.test(params.amount ?? '') || Number(params.amount) < 50)
      return err(400, 'Invalid integer: amount', 'amount');
    const pm = s.paymentMethods.get(params.payment_method);
    if (!pm) return err(400, `No such PaymentMethod: '${params.payment_method}'`, 'payment_method');
    if (!s.customers.has(params.customer))
      return err(400, `No such customer: '${params.customer}'`, 'customer');
    if (pm.customer !== params.customer)
      return err(
        400,
        'The provided PaymentMethod was previously used with a PaymentIntent without Customer ' +
          'attachment, shared with a connected account without Customer attachment, or was ' +
          'detached from a Customer. It may not be used again.',
        'payment_method',
      );
    const id = rid('pi');
    const pi: any = {
      id,
      object: 'payment_intent',
      amount: Number(params.amount),
      amount_received: 0,
      currency: params.currency,
      customer: params.customer,
      payment_method: params.payment_method,
      metadata: params.metadata ?? {},
      livemode: false,
      created: Math.floor(Date.now() / 1000),
      latest_charge: null,
      last_payment_error: null,
    };
    s.paymentIntents.set(id, pi);
    if (pm.kind === 'pm_card_chargeDeclined') {
      const error = {
        type: 'card_error',
        code: 'card_declined',
        decline_code: 'generic_decline',
        message: 'Your card was declined.',
      };
      Object.assign(pi, { status: 'requires_payment_method', last_payment_error: error });
      later('payment_intent.payment_failed', pi);
      return { status: 402, body: { error: { ...error, payment_intent: { ...pi } } } };
    }
    if (pm.kind === 'pm_card_authenticationRequired') {
      pi.status = 'requires_action';
      pi.next_action = { type: 'use_stripe_sdk' };
      return { status: 200, body: { ...pi } };
    }
    const charge = succeeded(s, pi);
    later('payment_intent.succeeded', pi);
    const expand = [params.expand ?? []].flat();
    return {
      status: 200,
      body: { ...pi, latest_charge: expand.includes('latest_charge') ? charge : charge.id },
    };
  }

  /** Answers a request of these paths; false when the path is none of them. */
  async function handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    path: string,
    params: any,
    query: URLSearchParams,
  ): Promise<boolean> {
    if (req.method === 'POST' && path === '/v1/customers') {
      const c = { id: rid('cus'), object: 'customer', metadata: params.metadata ?? {} };
      const key = req.headers['idempotency-key'];
      const seen = typeof key === 'string' ? idempotent.get(key) : undefined;
      if (seen) send(res, seen.status, seen.body);
      else {
        s.customers.set(c.id, c);
        if (typeof key === 'string') idempotent.set(key, { status: 200, body: c });
        send(res, 200, c);
      }
      return true;
    }
    const seti = /^\/v1\/setup_intents\/(seti_[0-9a-f]+)$/.exec(path);
    if (req.method === 'GET' && seti) {
      const si = s.setupIntents.get(seti[1]);
      if (!si) return (send(res, 404, { error: { type: 'invalid_request_error' } }), true);
      const expand = query.getAll('expand[]').concat(query.getAll('expand[0]'));
      const saved = s.paymentMethods.get(si.payment_method)!;
      const pm = {
        id: saved.id,
        object: 'payment_method',
        type: 'card',
        customer: saved.customer,
        card: CARDS[saved.kind],
      };
      send(res, 200, { ...si, payment_method: expand.includes('payment_method') ? pm : pm.id });
      return true;
    }
    if (req.method === 'POST' && path === '/v1/payment_intents') {
      const key = req.headers['idempotency-key'];
      let answer = typeof key === 'string' ? idempotent.get(key) : undefined;
      if (!answer) {
        answer = paymentIntent(params);
        if (typeof key === 'string') idempotent.set(key, answer);
      }
      if (s.answerDelayMs > 0) await new Promise((r) => setTimeout(r, s.answerDelayMs));
      if (s.loseAnswers > 0) {
        s.loseAnswers -= 1;
        req.socket.destroy();
        return true;
      }
      send(res, answer.status, answer.body);
      return true;
    }
    return cards(req, res, path, query);
  }
  const cards = cardRoutes(s);
  return { state: s, handle };
}

/** `pi` paid: its charge (with Stripe's `receipt_url`) made and kept, the intent succeeded. */
export function succeeded(s: OffSession, pi: any): any {
  const charge = {
    id: rid('ch'),
    object: 'charge',
    amount: pi.amount,
    currency: pi.currency,
    paid: true,
    status: 'succeeded',
    payment_intent: pi.id,
    receipt_url: `https://pay.stripe.com/receipts/payment/${rid('rcpt')}`,
  };
  s.charges.set(charge.id, charge);
  Object.assign(pi, { status: 'succeeded', amount_received: pi.amount, latest_charge: charge.id });
  return charge;
}

export function err(status: number, message: string, param?: string) {
  const type = status >= 500 ? 'api_error' : 'invalid_request_error';
  return { status, body: { error: { type, message, ...(param ? { param } : {}) } } };
}
