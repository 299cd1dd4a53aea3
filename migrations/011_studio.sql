-- The studio (src/studio/): people sign in with email and password, in server-side sessions, and render
-- without an API key.
--
-- Passwords are argon2id hashes (one per account that has set one). Sessions and one-time links
-- (invites, password resets) are stored as SHA-256 hashes of random ids: a database dump gives no usable
-- cookie or link. A session ends at the first of: sign-out (revoked_at), its idle expiry (last_seen_at),
-- its absolute expiry (expires_at). Operator console sessions are the same rows with no account.
CREATE TABLE studio_passwords (
  account_id    text PRIMARY KEY REFERENCES accounts (id),
  password_hash text NOT NULL,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE studio_sessions (
  id_hash      bytea PRIMARY KEY,
  account_id   text REFERENCES accounts (id),   -- null: an operator console session
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz
);
CREATE INDEX studio_sessions_account ON studio_sessions (account_id) WHERE revoked_at IS NULL;

CREATE TABLE studio_tokens (
  token_hash bytea PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  purpose    text NOT NULL CHECK (purpose IN ('invite', 'reset')),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);

-- Failed sign-ins per scope ('ip:…' or 'email:…', the email lowercased whether or not an account has
-- it) and per quarter hour: the throttle counts the current and previous windows.
CREATE UNLOGGED TABLE studio_signin_failures (
  scope        text NOT NULL,
  window_start bigint NOT NULL,   -- quarter hours since the Unix epoch
  failures     integer NOT NULL,
  PRIMARY KEY (scope, window_start)
);

-- A key's last use, to the minute: the janitor folds the request windows it removes into it
-- (src/queue/janitor.ts); the studio also reads the windows still present.
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;

-- Studio renders: rendergate_create_generations (migrations/006) with key_id allowed to be null. Such a
-- render is the same charge, ledger entry, generation and idempotency record as an API one; it counts
-- against no key's day (usage_day stays null, so refunds touch no day row either).
CREATE OR REPLACE FUNCTION rendergate_create_generations(p_items json, p_time_zone text)
RETURNS TABLE (idx integer, outcome text, generation_id text, inputs json, created_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  it record;
  prior record;
  made record;
  today date := (now() AT TIME ZONE p_time_zone)::date;
BEGIN
  PERFORM 1 FROM accounts a
    WHERE a.id IN (SELECT x.account_id FROM json_to_recordset(p_items) AS x(account_id text))
    ORDER BY a.id FOR UPDATE;

  FOR it IN
    SELECT * FROM json_to_recordset(p_items) AS x(i integer, id text, ledger_id text, account_id text, key_id text,
      idem text, hash text, model_id text, inputs json, cost bigint, deadline_s integer, cap bigint)
    ORDER BY x.account_id, x.i
  LOOP
    idx := it.i;
    generation_id := NULL;
    inputs := NULL;
    created_at := NULL;

    -- Another transaction has a request with this key in flight: refuse rather than wait. (Within this
    -- batch the lock is ours already, and the first item's record makes a second one a replay.)
    IF NOT pg_try_advisory_xact_lock(hashtextextended('idem:' || it.account_id || ':' || it.idem, 0)) THEN
      outcome := 'in_use';
      RETURN NEXT;
      CONTINUE;
    END IF;
    SELECT i.request_hash, i.generation_id INTO prior FROM idempotency_keys i
      WHERE i.account_id = it.account_id AND i.key = it.idem;
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
    UPDATE accounts SET balance_cents = balance_cents - it.cost WHERE id = it.account_id AND balance_cents >= it.cost;
    IF NOT FOUND THEN
      -- Give back the day's count taken just above (this transaction holds the row).
      UPDATE key_day_usage SET spent_cents = spent_cents - it.cost WHERE key_id = it.key_id AND day = today;
      outcome := 'refused';
      RETURN NEXT;
      CONTINUE;
    END IF;

    INSERT INTO generations AS g (id, account_id, key_id, usage_day, model_id, inputs, cost_cents, deadline_at)
      VALUES (it.id, it.account_id, it.key_id, CASE WHEN it.key_id IS NULL THEN NULL ELSE today END, it.model_id, it.inputs, it.cost, now() + make_interval(secs => it.deadline_s))
      RETURNING g.inputs, g.created_at INTO made;
    IF it.cost > 0 THEN
      INSERT INTO ledger_entries (id, account_id, kind, amount_cents, generation_id)
      VALUES (it.ledger_id, it.account_id, 'charge', it.cost, it.id);
    END IF;
    INSERT INTO idempotency_keys (account_id, key, request_hash, generation_id)
    VALUES (it.account_id, it.idem, decode(it.hash, 'hex'), it.id);
    outcome := 'created';
    generation_id := it.id;
    inputs := made.inputs;
    created_at := made.created_at;
    RETURN NEXT;
  END LOOP;
END $$;
