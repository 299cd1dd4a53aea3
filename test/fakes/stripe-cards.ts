// The stand-in's saved cards being detached, and its payments read back, after Stripe's API
// reference:
// - `POST /v1/payment_methods/{id}/detach` (https://docs.stripe.com/api/payment_methods/detach):
//   no parameters; answers the PaymentMethod with `customer: null`. Detachment is permanent: the
//   card can no longer pay or be attached again (the PaymentIntent create of stripe-offsession.ts
//   refuses it). A PaymentMethod attached to no customer (detached before) is a 400
//   `invalid_request_error`; an unknown id a 404 `resource_missing`
//   (https://docs.stripe.com/api/errors).
// - `GET /v1/payment_intents/{id}` (https://docs.stripe.com/api/payment_intents/retrieve), with
//   `expand[]=latest_charge` (https://docs.stripe.com/api/expanding_objects) expanding its charge,
//   whose `receipt_url` is Stripe's receipt page (https://docs.stripe.com/api/charges/object).
//   A Checkout Session paid here is paid by such a PaymentIntent (checkoutPayment).
import crypto from 'node:crypto';
import type http from 'node:http';
import { send } from './http-util.ts';
import { CARDS, err, succeeded, type OffSession } from './stripe-offsession.ts';

/** The PaymentIntent (succeeded, with its charge) that pays Checkout Session `session`; its id. */
export function checkoutPayment(s: OffSession, session: any): string {
  const pi = {
    id: `pi_${crypto.randomBytes(12).toString('hex')}`,
    object: 'payment_intent',
    amount: session.amount_total,
    amount_received: 0,
    currency: session.currency,
    customer: session.customer ?? null,
    payment_method: null,
    metadata: {},
    livemode: false,
    created: Math.floor(Date.now() / 1000),
    latest_charge: null,
    last_payment_error: null,
  };
  s.paymentIntents.set(pi.id, pi);
  succeeded(s, pi);
  return pi.id;
}

export function cardRoutes(s: OffSession) {
  return async function handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    path: string,
    query: URLSearchParams,
  ): Promise<boolean> {
    const detach = /^\/v1\/payment_methods\/([^/]+)\/detach$/.exec(path);
    if (req.method === 'POST' && detach) {
      if (s.failDetach > 0) {
        s.failDetach -= 1;
        if (!s.failDetachStatus) return (req.socket.destroy(), true);
        const e = err(s.failDetachStatus, 'An error occurred with our connection to Stripe.');
        const type = s.failDetachStatus === 429 ? 'rate_limit_error' : e.body.error.type;
        send(res, e.status, { error: { ...e.body.error, type } });
        return true;
      }
      const pm = s.paymentMethods.get(decodeURIComponent(detach[1]));
      const answer = !pm
        ? missing('payment_method', detach[1])
        : pm.customer === null
          ? err(
              400,
              'The payment method you provided is not attached to a customer so detachment ' +
                'is impossible.',
            )
          : { status: 200, body: paymentMethod(Object.assign(pm, { customer: null })) };
      send(res, answer.status, answer.body);
      return true;
    }
    const pi = /^\/v1\/payment_intents\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && pi) {
      if (s.failRetrieve > 0) {
        s.failRetrieve -= 1;
        const e = err(500, 'An unknown error occurred');
        return (send(res, e.status, e.body), true);
      }
      const found = s.paymentIntents.get(decodeURIComponent(pi[1]));
      if (!found) {
        const e = missing('intent', pi[1]);
        return (send(res, e.status, e.body), true);
      }
      const expand = query.getAll('expand[]').concat(query.getAll('expand[0]'));
      const charge = found.latest_charge ? s.charges.get(found.latest_charge) : null;
      const latest = expand.includes('latest_charge') ? charge : found.latest_charge;
      send(res, 200, { ...found, latest_charge: latest ?? null });
      return true;
    }
    return false;
  };
}

function paymentMethod(pm: { id: string; customer: string | null; kind: string }) {
  return {
    id: pm.id,
    object: 'payment_method',
    type: 'card',
    card: CARDS[pm.kind],
    customer: pm.customer,
    livemode: false,
    metadata: {},
  };
}

function missing(param: string, id: string) {
  const e = err(404, `No such ${param === 'intent' ? 'payment_intent' : 'PaymentMethod'}: '${id}'`);
  return {
    status: 404,
    body: { error: { ...e.body.error, code: 'resource_missing', param: param } },
  };
}
