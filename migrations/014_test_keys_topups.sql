-- Issue 23: test keys (docs/api.md "Test keys") and top-ups through Stripe Checkout (docs/billing.md).

-- A key's mode. A test key's renders are made by the service itself and move no money; they are seen
-- only by the account's test keys (generations.mode), and live ones only by its live keys.
ALTER TABLE api_keys ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE generations ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));

-- A reversal (a top-up refunded or disputed at Stripe) takes back what the balance holds; the rest is
-- the account's shortfall, taken from its next credits. An account with a shortfall starts no live render.
ALTER TABLE accounts ADD COLUMN shortfall_cents bigint NOT NULL DEFAULT 0
  CHECK (shortfall_cents >= 0 AND shortfall_cents <= 9007199254740991);

-- The new ledger kind: `reversal` lowers the balance, like a charge, and names no generation.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check
  CHECK (kind IN ('credit', 'charge', 'refund', 'reversal'));
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_generation_check
  CHECK ((kind IN ('credit', 'reversal')) = (generation_id IS NULL));

-- One row per paid Checkout Session: the primary key is what credits a session once, however often and
-- however concurrently its events arrive. refunded_cents and disputed_cents are what reversals took
-- back for it (Stripe reports refunds cumulatively), never more than was paid.
CREATE TABLE topups (
  session_id      text PRIMARY KEY,
  account_id      text NOT NULL REFERENCES accounts (id),
  amount_cents    bigint NOT NULL CHECK (amount_cents > 0 AND amount_cents <= 9007199254740991),
  payment_intent  text,
  credit_entry_id text NOT NULL,
  refunded_cents  bigint NOT NULL DEFAULT 0 CHECK (refunded_cents >= 0),
  disputed_cents  bigint NOT NULL DEFAULT 0 CHECK (disputed_cents >= 0),
  created_at      timestamptz NOT NULL DEFAULT now(),
  CHECK (refunded_cents + disputed_cents <= amount_cents)
);
CREATE INDEX topups_account ON topups (account_id, created_at DESC);
CREATE UNIQUE INDEX topups_payment_intent ON topups (payment_intent) WHERE payment_intent IS NOT NULL;

-- Every verified Stripe event received, with what it did, for the operator console. (Events whose
-- signature fails are answered 400 and written nowhere.)
CREATE TABLE stripe_events (
  id           text PRIMARY KEY,           -- our own (sev_…): one event id can arrive many times
  event_id     text NOT NULL,
  type         text NOT NULL,
  livemode     boolean NOT NULL,
  account_id   text,                        -- as the event names it: possibly no account of ours
  session_id   text,
  amount_cents bigint,
  outcome      text NOT NULL CHECK (outcome IN ('credited', 'duplicate', 'ignored', 'refused', 'reversed')),
  detail       text,
  received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stripe_events_account ON stripe_events (account_id, id DESC);

-- Creates (migrations/006 and 011) with the mode of the paying key. A test item counts its price against
-- the key's day like a live one but moves no balance and writes no ledger entry; `short` (a test input
-- asking for rendergate:insufficient) refuses it as a short balance would. Idempotency keys of test keys
-- live apart from live ones ('test ' + key: a header value never contains a space). A live item is
-- refused while the account has a shortfall. An item without `mode` (an earlier release) is live.
CREATE OR REPLACE FUNCTION rendergate_create_generations(p_items json, p_time_zone text)
RETURNS TABLE (idx integer, outcome text, generation_id text, inputs json, created_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  it record;
  prior record;
  made record;
  is_test boolean;
  idem_key text;
  today date := (now() AT TIME ZONE p_time_zone)::date;
BEGIN
  PERFORM 1 FROM accounts a
    WHERE a.id IN (SELECT x.account_id FROM json_to_recordset(p_items) AS x(account_id text))
    ORDER BY a.id FOR UPDATE;

  FOR it IN
    SELECT * FROM json_to_recordset(p_items) AS x(i integer, id text, ledger_id text, account_id text, key_id text,
      idem text, hash text, model_id text, inputs json, cost bigint, deadline_s integer, cap bigint,
      mode text, short boolean)
    ORDER BY x.account_id, x.i
  LOOP
    idx := it.i;
    is_test := coalesce(it.mode = 'test', false);
    idem_key := CASE WHEN is_test THEN 'test ' || it.idem ELSE it.idem END;
    generation_id := NULL;
    inputs := NULL;
    created_at := NULL;

    -- Another transaction has a request with this key in flight: refuse rather than wait. (Within this
    -- batch the lock is ours already, and the first item's record makes a second one a replay.)
    IF NOT pg_try_advisory_xact_lock(hashtextextended('idem:' || it.account_id || ':' || idem_key, 0)) THEN
      outcome := 'in_use';
      RETURN NEXT;
      CONTINUE;
    END IF;
    SELECT i.request_hash, i.generation_id INTO prior FROM idempotency_keys i
      WHERE i.account_id = it.account_id AND i.key = idem_key;
    IF FOUND THEN
      outcome := CASE WHEN prior.request_hash = decode(it.hash, 'hex') THEN 'replayed' ELSE 'reused' END;
      generation_id := prior.generation_id;
      RETURN NEXT;
      CONTINUE;
    END IF;

    -- Count the price against the key's day; the WHERE refuses an update that would pass the cap.
    -- A studio render (no key) has no day to count against.
    IF it.key_id IS NOT NULL THEN
      IF it.cap IS NOT NULL AND it.cost > it.cap THEN
        outcome := 'refused';
        RETURN NEXT;
        CONTINUE;
      END IF;
      INSERT INTO key_day_usage AS u (key_id, day, spent_cents) VALUES (it.key_id, today, it.cost)
      ON CONFLICT (key_id, day) DO UPDATE SET spent_cents = u.spent_cents + EXCLUDED.spent_cents
        WHERE it.cap IS NULL OR u.spent_cents + EXCLUDED.spent_cents <= it.cap;
      IF NOT FOUND THEN
        outcome := 'refused';
        RETURN NEXT;
        CONTINUE;
      END IF;
    END IF;
    IF is_test THEN
      PERFORM 1 WHERE NOT coalesce(it.short, false);
    ELSE
      UPDATE accounts SET balance_cents = balance_cents - it.cost
        WHERE id = it.account_id AND balance_cents >= it.cost AND shortfall_cents = 0;
    END IF;
    IF NOT FOUND THEN
      -- Give back the day's count taken just above (this transaction holds the row).
      UPDATE key_day_usage SET spent_cents = spent_cents - it.cost WHERE key_id = it.key_id AND day = today;
      outcome := 'refused';
      RETURN NEXT;
      CONTINUE;
    END IF;

    -- A test render is never claimed by a worker (run_after 'infinity'): the service makes it itself.
    INSERT INTO generations AS g (id, account_id, key_id, usage_day, model_id, inputs, cost_cents, deadline_at,
        mode, run_after)
      VALUES (it.id, it.account_id, it.key_id, CASE WHEN it.key_id IS NULL THEN NULL ELSE today END,
        it.model_id, it.inputs, it.cost, now() + make_interval(secs => it.deadline_s),
        CASE WHEN is_test THEN 'test' ELSE 'live' END, CASE WHEN is_test THEN 'infinity'::timestamptz ELSE now() END)
      RETURNING g.inputs, g.created_at INTO made;
    IF it.cost > 0 AND NOT is_test THEN
      INSERT INTO ledger_entries (id, account_id, kind, amount_cents, generation_id)
      VALUES (it.ledger_id, it.account_id, 'charge', it.cost, it.id);
    END IF;
    INSERT INTO idempotency_keys (account_id, key, request_hash, generation_id)
    VALUES (it.account_id, idem_key, decode(it.hash, 'hex'), it.id);
    outcome := 'created';
    generation_id := it.id;
    inputs := made.inputs;
    created_at := made.created_at;
    RETURN NEXT;
  END LOOP;
END $$;
