// The shape of a verified Stripe event (docs/billing.md "Events"): the envelope and, for the
// events that move money, the fields of data.object that are read, each checked for its type (ids
// and names as short tokens, amounts as safe non-negative integers). A signed event of any other
// shape is refused with 400 INVALID_REQUEST naming the field, before anything is written: Stripe's
// own events always pass, and anything else is no event of Stripe's to act on. Fields after
// Stripe's API reference: docs.stripe.com/api/events/object, /api/checkout/sessions/object,
// /api/charges/object, /api/disputes/object.
import { ApiError } from '../domain/errors.ts';

export const SESSION_TYPES = [
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
] as const;
export const DISPUTE_TYPES = [
  'charge.dispute.created',
  'charge.dispute.updated',
  'charge.dispute.funds_withdrawn',
  'charge.dispute.closed',
  'charge.dispute.funds_reinstated',
] as const;

export interface SessionIn {
  id: string;
  mode: string | null;
  paymentStatus: string | null;
  amountTotal: number | null;
  currency: string | null;
  /** client_reference_id, else metadata[rendergate_account]: the account the session names. */
  accountRef: string | null;
  /** metadata[rendergate_checkout]: our row's id, set on every session this service creates. */
  checkoutRef: string | null;
  paymentIntent: string | null;
  /** When Stripe created it (Unix seconds). */
  created: number | null;
  /** A setup session's SetupIntent and the customer it saves a card for. */
  setupIntent: string | null;
  customer: string | null;
}
/** A PaymentIntent of an auto-recharge (its metadata names our recharge row). */
export interface PaymentIntentIn {
  id: string;
  amount: number;
  currency: string | null;
  status: string;
  rechargeRef: string | null;
  accountRef: string | null;
  failure: string | null;
}
export const PAYMENT_INTENT_TYPES = [
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
] as const;
export interface ChargeIn {
  id: string;
  paymentIntent: string | null;
  amountRefunded: number;
}
export interface DisputeIn {
  id: string;
  paymentIntent: string | null;
  amount: number;
  status: string;
}

interface Envelope {
  id: string;
  type: string;
  livemode: boolean;
}
export type StripeEventIn = Envelope &
  (
    | { kind: 'session'; session: SessionIn }
    | { kind: 'charge'; charge: ChargeIn }
    | { kind: 'dispute'; dispute: DisputeIn }
    | { kind: 'payment_intent'; paymentIntent: PaymentIntentIn }
    | { kind: 'other' }
  );

type Obj = Record<string, unknown>;
const TOKEN = /^[A-Za-z0-9_.-]{1,255}$/;

const bad = (field: string, what: string) =>
  new ApiError('INVALID_REQUEST', `A Stripe event's ${field} must be ${what}.`);

function obj(v: unknown, field: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(field, 'an object');
  return v as Obj;
}

function token(v: unknown, field: string): string {
  if (typeof v !== 'string' || !TOKEN.test(v))
    throw bad(field, 'a short string of letters and digits');
  return v;
}

const tokenOrNull = (v: unknown, field: string) => (v == null ? null : token(v, field));

/** Amounts (cents) and times (seconds): a whole number from 0 that a JSON reader holds exactly. */
function whole(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw bad(field, 'a whole number, 0 or more');
  return v;
}

const wholeOrNull = (v: unknown, field: string) => (v == null ? null : whole(v, field));

function bool(v: unknown, field: string): boolean {
  if (typeof v !== 'boolean') throw bad(field, 'true or false');
  return v;
}

/** An id field that Stripe may expand into its object: the id either way. */
function ref(v: unknown, field: string): string | null {
  if (v == null) return null;
  return typeof v === 'object' ? token(obj(v, field).id, `${field}.id`) : token(v, field);
}

function session(o: Obj): SessionIn {
  const f = (k: string) => `data.object.${k}`;
  const metadata = o.metadata == null ? {} : obj(o.metadata, f('metadata'));
  const clientRef = tokenOrNull(o.client_reference_id, f('client_reference_id'));
  const metaAccount = tokenOrNull(metadata.rendergate_account, f('metadata.rendergate_account'));
  return {
    id: token(o.id, f('id')),
    mode: tokenOrNull(o.mode, f('mode')),
    paymentStatus: tokenOrNull(o.payment_status, f('payment_status')),
    amountTotal: wholeOrNull(o.amount_total, f('amount_total')),
    currency: tokenOrNull(o.currency, f('currency')),
    accountRef: clientRef ?? metaAccount,
    checkoutRef: tokenOrNull(metadata.rendergate_checkout, f('metadata.rendergate_checkout')),
    paymentIntent: ref(o.payment_intent, f('payment_intent')),
    created: wholeOrNull(o.created, f('created')),
    setupIntent: ref(o.setup_intent, f('setup_intent')),
    customer: ref(o.customer, f('customer')),
  };
}

function paymentIntent(o: Obj): PaymentIntentIn {
  const f = (k: string) => `data.object.${k}`;
  const metadata = o.metadata == null ? {} : obj(o.metadata, f('metadata'));
  const error =
    o.last_payment_error == null ? null : obj(o.last_payment_error, f('last_payment_error'));
  const message = error && typeof error.message === 'string' ? error.message.slice(0, 300) : null;
  return {
    id: token(o.id, f('id')),
    amount: whole(o.amount, f('amount')),
    currency: tokenOrNull(o.currency, f('currency')),
    status: token(o.status, f('status')),
    rechargeRef: tokenOrNull(metadata.rendergate_recharge, f('metadata.rendergate_recharge')),
    accountRef: tokenOrNull(metadata.rendergate_account, f('metadata.rendergate_account')),
    failure: message,
  };
}

/** The event as read, or 400 INVALID_REQUEST naming the first field of the wrong shape. */
export function parseStripeEvent(body: unknown): StripeEventIn {
  const e = obj(body, 'body');
  const env: Envelope = {
    id: token(e.id, 'id'),
    type: token(e.type, 'type'),
    livemode: bool(e.livemode, 'livemode'),
  };
  const o = obj(obj(e.data, 'data').object, 'data.object');
  const f = (k: string) => `data.object.${k}`;
  if ((SESSION_TYPES as readonly string[]).includes(env.type))
    return { ...env, kind: 'session', session: session(o) };
  if (env.type === 'charge.refunded') {
    const charge = {
      id: token(o.id, f('id')),
      paymentIntent: ref(o.payment_intent, f('payment_intent')),
      amountRefunded: whole(o.amount_refunded, f('amount_refunded')),
    };
    return { ...env, kind: 'charge', charge };
  }
  if ((DISPUTE_TYPES as readonly string[]).includes(env.type)) {
    const dispute = {
      id: token(o.id, f('id')),
      paymentIntent: ref(o.payment_intent, f('payment_intent')),
      amount: whole(o.amount, f('amount')),
      status: token(o.status, f('status')),
    };
    return { ...env, kind: 'dispute', dispute };
  }
  if ((PAYMENT_INTENT_TYPES as readonly string[]).includes(env.type))
    return { ...env, kind: 'payment_intent', paymentIntent: paymentIntent(o) };
  return { ...env, kind: 'other' };
}
