// A stand-in for the parts of Stripe's API that top-ups use, after Stripe's API reference
// (docs.stripe.com/api/checkout/sessions/create, /api/checkout/sessions/object, /api/events/object,
// /api/charges/object, /api/disputes/object, /api/errors) and the form encoding the official
// `stripe` library sends (nested parameters as `line_items[0][price_data][currency]=eur`):
// - `POST /v1/checkout/sessions`, `Authorization: Bearer <secret key>` → 200 a Checkout Session
//   `{ id: "cs_test_…", object: "checkout.session", mode, status: "open", payment_status: "unpaid",
//   amount_total, currency, client_reference_id, metadata, success_url, cancel_url, url, … }`;
//   a wrong key → 401, a missing or bad parameter → 400, each with Stripe's
//   `{ error: { type, message, param? } }` body; a repeated `Idempotency-Key` header gets the
//   first answer again and creates nothing (docs.stripe.com/api/idempotent_requests).
// - The hosted page at the session's `url` (`GET /c/pay/{id}`): a **Pay** button whose POST marks the
//   session paid, redirects (303) to `success_url` with `{CHECKOUT_SESSION_ID}` filled in, and then
//   sends the signed `checkout.session.completed` event to the webhook URL, as Stripe does after the
//   payment. A paid session's `payment_intent` is a PaymentIntent of stripe-cards.ts, whose charge
//   has a `receipt_url`.
// Events are signed with the library's own `stripe.webhooks.generateTestHeaderString`.
import crypto from 'node:crypto';
import Stripe from 'stripe';
import { listen, send } from './http-util.ts';
import { offSession, type OffSession } from './stripe-offsession.ts';
import { checkoutPayment } from './stripe-cards.ts';
import { checkCreate, parseStripeForm, stripeError } from './stripe-form.ts';

export interface StripeFake {
  base: string;
  secretKey: string;
  webhookSecret: string;
  /** Where the hosted page sends its events (the service's /webhooks/stripe). */
  webhookUrl: string;
  sessions: Map<string, any>;
  /** Every request to the API (not the hosted pages), in order. */
  requests: { method: string; path: string; params: any }[];
  /** An event of `type` about `object`, as Stripe sends it. */
  event(type: string, object: any): any;
  /** The `Stripe-Signature` header of `payload`, made now by the library's own helper. */
  sign(payload: string): string;
  /** POSTs `payload` (signed unless `signature` is given) to the webhook URL. */
  deliver(
    payload: string,
    opts?: { signature?: string | null; url?: string },
  ): Promise<{ status: number; body: any }>;
  /** A session of ours as paid: payment_status paid, status complete, with a PaymentIntent. */
  pay(sessionId: string, paymentStatus?: 'paid' | 'unpaid'): any;
  charge(session: any, refunded: number): any;
  /** A dispute of the session's payment; the same `id` across events is the same dispute. */
  dispute(session: any, amount: number, o?: { id?: string; status?: string }): any;
  /** Customers, saved cards and off-session PaymentIntents (stripe-offsession.ts). */
  offSession: OffSession;
  close: () => Promise<void>;
}

const rid = (prefix: string) => `${prefix}_${crypto.randomBytes(12).toString('hex')}`;

export async function stripeFake(opts: { webhookUrl?: string } = {}): Promise<StripeFake> {
  const stripe = new Stripe('sk_test_fake_for_signing_only');
  const fake = {
    secretKey: `sk_test_${crypto.randomBytes(12).toString('hex')}`,
    webhookSecret: `whsec_${crypto.randomBytes(16).toString('hex')}`,
    webhookUrl: opts.webhookUrl ?? '',
    sessions: new Map(),
    requests: [],
  } as unknown as StripeFake;

  fake.event = (type, object) => ({
    id: rid('evt'),
    object: 'event',
    api_version: '2025-01-27.acacia',
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  });
  fake.sign = (payload) =>
    stripe.webhooks.generateTestHeaderString({ payload, secret: fake.webhookSecret });
  fake.deliver = async (payload, o = {}) => {
    const signature = o.signature === undefined ? fake.sign(payload) : o.signature;
    const res = await fetch(o.url ?? fake.webhookUrl, {
      method: 'POST',
      body: payload,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        ...(signature === null ? {} : { 'stripe-signature': signature }),
      },
    });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: res.status, body };
  };
  fake.pay = (sessionId, paymentStatus = 'paid') => {
    const s = fake.sessions.get(sessionId);
    Object.assign(s, {
      status: 'complete',
      payment_status: paymentStatus,
      payment_intent: s.payment_intent ?? checkoutPayment(fake.offSession, s),
    });
    return { ...s };
  };
  fake.charge = (s, refunded) => ({
    id: rid('ch'),
    object: 'charge',
    amount: s.amount_total,
    amount_captured: s.amount_total,
    amount_refunded: refunded,
    currency: s.currency,
    paid: true,
    refunded: refunded >= s.amount_total,
    payment_intent: s.payment_intent,
    status: 'succeeded',
  });
  fake.dispute = (s, amount, o = {}) => ({
    id: o.id ?? rid('dp'),
    object: 'dispute',
    amount,
    currency: s.currency,
    charge: rid('ch'),
    payment_intent: s.payment_intent,
    reason: 'fraudulent',
    status: o.status ?? 'needs_response',
  });

  const extra = offSession({
    event: (t, o) => fake.event(t, o),
    deliver: (payload) => fake.deliver(payload),
  });
  fake.offSession = extra.state;
  const idempotent = new Map<string, any>();
  const { base, close } = await listen(
    (req, res) =>
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://x');
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const text = Buffer.concat(chunks).toString('utf8');
        const pay = /^\/c\/pay\/(cs_test_[0-9a-f]+)$/.exec(url.pathname);
        if (pay) return hostedPage(req.method ?? 'GET', pay[1], res, text);
        const params = parseStripeForm(text);
        fake.requests.push({ method: req.method ?? '', path: url.pathname, params });
        if (req.headers.authorization !== `Bearer ${fake.secretKey}`) {
          return stripeError(res, 401, 'Invalid API Key provided.');
        }
        if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
          // Stripe answers a repeated Idempotency-Key with the first answer, creating nothing.
          const key = req.headers['idempotency-key'];
          const seen = typeof key === 'string' ? idempotent.get(key) : undefined;
          if (seen) return send(res, 200, seen);
          const bad = checkCreate(params);
          if (bad) return stripeError(res, 400, bad.message, bad.param);
          const id = `cs_test_${crypto.randomBytes(16).toString('hex')}`;
          const items = params.line_items ?? [];
          const total = items.reduce(
            (n: number, li: any) =>
              n + Number(li.price_data?.unit_amount ?? 0) * Number(li.quantity),
            0,
          );
          const session = {
            id,
            object: 'checkout.session',
            mode: params.mode,
            status: 'open',
            payment_status: 'unpaid',
            amount_subtotal: total,
            amount_total: total,
            currency: items[0]?.price_data?.currency ?? params.currency ?? null,
            client_reference_id: params.client_reference_id ?? null,
            metadata: params.metadata ?? {},
            success_url: params.success_url,
            cancel_url: params.cancel_url ?? null,
            url: `${base}/c/pay/${id}`,
            livemode: false,
            payment_intent: null,
            customer: params.customer ?? null,
            setup_intent: null,
            created: Math.floor(Date.now() / 1000),
            expires_at: Math.floor(Date.now() / 1000) + 86_400,
          };
          fake.sessions.set(id, session);
          if (typeof key === 'string') idempotent.set(key, session);
          return send(res, 200, session);
        }
        if (await extra.handle(req, res, url.pathname, params, url.searchParams)) return;
        return stripeError(res, 404, `Unrecognized request URL (${req.method}: ${url.pathname}).`);
      })().catch((e) => {
        if (!res.headersSent) send(res, 500, { error: { type: 'api_error', message: String(e) } });
      }),
  );

  function hostedPage(method: string, id: string, res: any, body: string) {
    const s = fake.sessions.get(id);
    if (!s) {
      res.writeHead(404).end('no such session');
      return;
    }
    if (s.mode === 'setup') return setupPage(method, s, res, body);
    if (method === 'GET') {
      const html = `<!doctype html><title>Checkout</title><h1>Pay €${(s.amount_total / 100).toFixed(2)}</h1>
<form method="post" action="/c/pay/${id}"><button type="submit">Pay</button></form>`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      return;
    }
    const paid = fake.pay(id);
    res.writeHead(303, { location: s.success_url.replace('{CHECKOUT_SESSION_ID}', id) }).end();
    // After the redirect, as Stripe's events arrive on their own schedule.
    setTimeout(
      () =>
        void fake
          .deliver(JSON.stringify(fake.event('checkout.session.completed', paid)))
          .catch(() => undefined),
      300,
    );
  }

  /** A setup session's page: pick a test card, **Save card**; then its completed event. */
  function setupPage(method: string, s: any, res: any, body: string) {
    if (method === 'GET') {
      const options = ['pm_card_visa', 'pm_card_chargeDeclined', 'pm_card_authenticationRequired']
        .map((c) => `<option value="${c}">${c}</option>`)
        .join('');
      const html = `<!doctype html><title>Save a card</title><h1>Save a card</h1>
<form method="post" action="/c/pay/${s.id}">
<label>Card <select name="card">${options}</select></label>
<button type="submit">Save card</button></form>`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      return;
    }
    const card = new URLSearchParams(body).get('card') ?? 'pm_card_visa';
    const done = fake.offSession.completeSetup(s, card);
    res.writeHead(303, { location: s.success_url.replace('{CHECKOUT_SESSION_ID}', s.id) }).end();
    setTimeout(
      () =>
        void fake
          .deliver(JSON.stringify(fake.event('checkout.session.completed', done)))
          .catch(() => undefined),
      100,
    );
  }

  fake.base = base;
  fake.close = close;
  return fake;
}
