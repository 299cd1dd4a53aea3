-- Creates in batches: every create waiting in an API process goes to the database in one call of this
-- function, one transaction and one commit (group commit in the application). Each create was eleven
-- statements and a commit of its own, and creates on one account queued one WAL flush at a time on its
-- balance row; a batch pays one round trip and one flush for all of its creates.
--
-- Each item is decided on its own, exactly as a single create would be: the same guarded statements,
-- no item's refusal touches another's rows, and the function never raises for a refusal.
--
-- Lock order (no deadlock between batches, creates and refunds): the batch's accounts first, in id order,
-- then, under its account's lock, each key's day row; refunds (src/services/refunds.ts) take the account
-- before the day row too. Items are taken in (account, arrival) order.
--
-- Outcomes per item: 'created'; 'replayed' (this key was used with the same body: its generation);
-- 'reused' (used with another body); 'in_use' (a request with this key is in another transaction right
-- now); 'refused' (a short balance or a reached daily cap: the caller reads which, for its message).
-- The caller wakes the workers once the batch has committed (src/queue/wake.ts).
--
-- The 202 body of a replay is rebuilt from the generation (as it was at creation: queued, nothing
-- refunded), so the idempotency record no longer keeps a copy of it.
ALTER TABLE idempotency_keys DROP COLUMN response;

CREATE FUNCTION rendergate_create_generations(p_items json, p_time_zone text)
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
    UPDATE accounts SET balance_cents = balance_cents - it.cost WHERE id = it.account_id AND balance_cents >= it.cost;
    IF NOT FOUND THEN
      -- Give back the day's count taken just above (this transaction holds the row).
      UPDATE key_day_usage SET spent_cents = spent_cents - it.cost WHERE key_id = it.key_id AND day = today;
      outcome := 'refused';
      RETURN NEXT;
      CONTINUE;
    END IF;

    INSERT INTO generations AS g (id, account_id, key_id, usage_day, model_id, inputs, cost_cents, deadline_at)
      VALUES (it.id, it.account_id, it.key_id, today, it.model_id, it.inputs, it.cost, now() + make_interval(secs => it.deadline_s))
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
