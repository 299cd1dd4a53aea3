-- Auto-recharge with a saved card, and numbered receipts (docs/billing.md).
--
-- An account's auto-recharge: its Stripe customer (made once), the card saved through a Checkout
-- Session in setup mode, the threshold and the amount, and whether it is on. It can be on only
-- with a card, both amounts, and a threshold below the amount (one recharge lifts the balance
-- above it). off_reason says why it was turned off (a decline, requires_action).
CREATE TABLE auto_recharge (
  account_id     text PRIMARY KEY REFERENCES accounts (id),
  customer_id    text UNIQUE,
  payment_method text,
  card_brand     text,
  card_last4     text,
  below_cents    bigint CHECK (below_cents > 0),
  amount_cents   bigint CHECK (amount_cents > 0 AND amount_cents <= 99999999),
  enabled        boolean NOT NULL DEFAULT false,
  off_reason     text,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  CHECK (NOT enabled OR (payment_method IS NOT NULL AND below_cents < amount_cents))
);

-- The threshold copied onto the account while auto-recharge is on (null otherwise), so the
-- trigger that wakes the workers (src/db/sql/recharge_wake.sql) tests a crossing in its WHEN
-- clause, on the row the charge updates, without a call or a lookup on the charge's path.
ALTER TABLE accounts ADD COLUMN recharge_below_cents bigint;
CREATE INDEX accounts_recharge ON accounts (id) WHERE recharge_below_cents IS NOT NULL;

-- One row per recharge: its id is the PaymentIntent's Idempotency-Key, so a call retried after a
-- crash makes no second payment. At most one in flight per account (the partial unique index);
-- `day` (RENDERGATE_DAY_TIMEZONE) bounds how many a day, counted under the auto_recharge row's
-- lock.
-- A recharge is credited once: the move to `succeeded` with its credit entry, guarded.
CREATE TABLE auto_recharges (
  id              text PRIMARY KEY,
  account_id      text NOT NULL REFERENCES accounts (id),
  amount_cents    bigint NOT NULL CHECK (amount_cents > 0),
  customer_id     text NOT NULL,
  payment_method  text NOT NULL,
  day             date NOT NULL,
  status          text NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'succeeded', 'failed')),
  payment_intent  text UNIQUE,
  credit_entry_id text UNIQUE,
  failure         text,
  attempted_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'succeeded') = (credit_entry_id IS NOT NULL))
);
CREATE UNIQUE INDEX auto_recharges_in_flight ON auto_recharges (account_id)
  WHERE status = 'pending';
CREATE INDEX auto_recharges_day ON auto_recharges (account_id, day);

-- Receipts: every credit (series R) and every reversal of a payment (series CN, credit notes) gets
-- the next number of its series and year, R-2026-000001. The counter row is updated in the
-- credit's own transaction (src/ledger/sql/number_receipt.sql), so a rolled-back credit takes no
-- number and the sequence has no gaps, which a SEQUENCE would not promise.
CREATE TABLE receipt_counters (
  series text NOT NULL CHECK (series IN ('R', 'CN')),
  year   int NOT NULL,
  last   int NOT NULL CHECK (last > 0),
  PRIMARY KEY (series, year)
);
CREATE TABLE receipts (
  number       text PRIMARY KEY,
  series       text NOT NULL CHECK (series IN ('R', 'CN')),
  year         int NOT NULL,
  seq          int NOT NULL CHECK (seq > 0),
  account_id   text NOT NULL REFERENCES accounts (id),
  entry_id     text NOT NULL UNIQUE,
  amount_cents bigint NOT NULL CHECK (amount_cents > 0),
  reason       text,
  receipt_url  text,
  created_at   timestamptz NOT NULL,
  UNIQUE (series, year, seq)
);
CREATE INDEX receipts_account ON receipts (account_id, created_at DESC);

-- The credits and reversals made before this release are numbered here, in the order they were
-- made, each year from 1; a shortfall made good from a credit is bookkeeping, not a reversal of a
-- payment, and gets no credit note (the trigger skips it too).
INSERT INTO receipts (number, series, year, seq, account_id, entry_id, amount_cents, reason,
                      created_at)
SELECT n.series || '-' || n.year || '-' || lpad(n.seq::text, 6, '0'), n.series, n.year, n.seq,
       n.account_id, n.id, n.amount_cents, n.reason, n.created_at
FROM (
  SELECT l.*, s.series, s.year,
         row_number() OVER (PARTITION BY s.series, s.year ORDER BY l.created_at, l.id)::int AS seq
  FROM ledger_entries l
  CROSS JOIN LATERAL (SELECT CASE l.kind WHEN 'credit' THEN 'R' ELSE 'CN' END AS series,
                             extract(year FROM l.created_at AT TIME ZONE 'UTC')::int AS year) s
  WHERE l.kind = 'credit'
     OR (l.kind = 'reversal' AND coalesce(l.reason, '') NOT LIKE 'Shortfall made good from %')
) n;
INSERT INTO receipt_counters (series, year, last)
SELECT series, year, max(seq) FROM receipts GROUP BY series, year;
