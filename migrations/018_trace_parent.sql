-- Tracing (docs/operations.md "Tracing"): the W3C traceparent of the span that created a render, so
-- the worker that claims it continues the same trace in another process. NULL when tracing is off.
ALTER TABLE generations ADD COLUMN trace_parent text;

-- rendergate_create_generations as migrations/014 defines it (mode and short unchanged), writing each
-- item's `trace_parent` (absent from the item: NULL) in the INSERT that creates the render, so the
-- row is never claimable without it.
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
      mode text, short boolean, trace_parent text)
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
        mode, run_after, trace_parent)
      VALUES (it.id, it.account_id, it.key_id, CASE WHEN it.key_id IS NULL THEN NULL ELSE today END,
        it.model_id, it.inputs, it.cost, now() + make_interval(secs => it.deadline_s),
        CASE WHEN is_test THEN 'test' ELSE 'live' END, CASE WHEN is_test THEN 'infinity'::timestamptz ELSE now() END,
        it.trace_parent)
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
