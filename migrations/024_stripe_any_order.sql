-- Issue 36: Stripe's money events in any order (docs/billing.md "Money rules").

-- Every Checkout Session this service creates, recorded before Stripe is asked: its id (ours) is
-- the create's Idempotency-Key at Stripe and the session's metadata[rendergate_checkout], so a
-- session whose create answer was lost (a crash, a timeout) is still known when its events come.
-- Only these sessions are credited, and only at the amount recorded here. They also bound
-- creation: an account makes at most 10 an hour, payments and card set-ups together
-- (src/db/checkout-sessions.ts, a guarded insert under a lock per account). failed_at: Stripe said
-- the asynchronous payment failed; the session is then never credited, whichever of its events
-- comes first.
CREATE TABLE checkout_sessions (
  id           text PRIMARY KEY,
  account_id   text NOT NULL REFERENCES accounts (id),
  mode         text NOT NULL CHECK (mode IN ('payment', 'setup')),
  amount_cents bigint CHECK (amount_cents > 0 AND amount_cents <= 9007199254740991),
  session_id   text UNIQUE,
  failed_at    timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CHECK ((mode = 'payment') = (amount_cents IS NOT NULL))
);
CREATE INDEX checkout_sessions_account ON checkout_sessions (account_id, created_at DESC);

-- What Stripe said of a payment (a PaymentIntent), kept whether or not its top-up is credited yet:
-- the largest cumulative amount_refunded of its charge.refunded events. Its row is also the lock
-- every event about the payment takes first, so those events apply one at a time.
CREATE TABLE stripe_payments (
  payment_intent text PRIMARY KEY,
  refunded_cents bigint NOT NULL DEFAULT 0
    CHECK (refunded_cents >= 0 AND refunded_cents <= 9007199254740991),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Each dispute of a payment, from any of its events: its amount, whether its funds were withdrawn
-- (a chargeback; an inquiry withdraws nothing) and whether they were reinstated (won). Both only
-- ever turn true, so the events agree whatever their order.
CREATE TABLE stripe_disputes (
  dispute_id     text PRIMARY KEY,
  payment_intent text NOT NULL,
  amount_cents   bigint NOT NULL CHECK (amount_cents >= 0 AND amount_cents <= 9007199254740991),
  withdrawn      boolean NOT NULL DEFAULT false,
  reinstated     boolean NOT NULL DEFAULT false,
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stripe_disputes_payment ON stripe_disputes (payment_intent);

-- Two more outcomes: `kept` (an event about a payment not credited yet, applied when it is) and
-- `reinstated` (a won dispute's money given back).
ALTER TABLE stripe_events DROP CONSTRAINT stripe_events_outcome_check;
ALTER TABLE stripe_events ADD CONSTRAINT stripe_events_outcome_check CHECK (outcome IN
  ('credited', 'duplicate', 'ignored', 'refused', 'reversed', 'kept', 'reinstated'));

-- When sessions started being recorded (Unix seconds). Sessions the previous release created are
-- not in checkout_sessions; for a day from here, one paid at an offered amount is still credited
-- (src/services/stripe-checkout.ts), so a rolling upgrade loses no payment.
INSERT INTO server_settings (name, value)
VALUES ('checkout_sessions_recorded_since', extract(epoch FROM now())::bigint::text)
ON CONFLICT (name) DO NOTHING;
