-- Cards to detach at Stripe (docs/billing.md "Auto-recharge"). Remove card, or a new card saved over
-- an old one, forgets the card in auto_recharge and writes its row here in the same transaction, so
-- no recharge can use it from that commit on; the PaymentMethod is then detached from the account's
-- Stripe customer (POST /v1/payment_methods/{id}/detach) at once, or, if Stripe failed or was not
-- reached, by a worker's auto-recharge runner after a growing pause (1 minute times the attempts
-- made, at most an hour), until Stripe says it is detached. `attempted_at` is also the lease: one
-- process calls at a time.
CREATE TABLE card_detachments (
  payment_method text PRIMARY KEY,
  account_id     text NOT NULL REFERENCES accounts (id),
  customer_id    text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  attempts       integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  attempted_at   timestamptz,
  last_error     text,
  detached_at    timestamptz
);
CREATE INDEX card_detachments_due ON card_detachments (created_at) WHERE detached_at IS NULL;
