-- Webhook endpoints have a mode, as Stripe's do (docs/api.md "Webhooks", "Test keys"): a test
-- key creates, sees and deletes only test endpoints, a live key only live ones, and each endpoint
-- receives only the events of renders of its own mode. Every endpoint made before is live.
ALTER TABLE webhook_endpoints ADD COLUMN mode text NOT NULL DEFAULT 'live'
  CHECK (mode IN ('live', 'test'));

-- The outbox trigger of migrations/009, routing each event to the endpoints of the render's mode
-- only: a test render's events (livemode false) to test endpoints, a live render's to live ones.
-- The probe that spares accounts without endpoints looks at the render's mode too, so a test
-- render of an account with live endpoints only costs that one index probe and makes no ids.
CREATE OR REPLACE FUNCTION rendergate_generation_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  kind text;
  evt text;
BEGIN
  IF OLD.status = 'queued' AND NEW.status <> 'queued' THEN kind := 'generation.' || NEW.status;
  ELSIF OLD.status = 'succeeded' AND NEW.status = 'refunded' THEN kind := 'generation.refunded';
  ELSIF OLD.started_at IS NULL AND NEW.started_at IS NOT NULL THEN kind := 'generation.started';
  ELSE RETURN NULL;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.account_id = NEW.account_id AND e.enabled
                 AND e.deleted_at IS NULL AND e.mode = NEW.mode) THEN
    RETURN NULL;
  END IF;
  evt := rendergate_new_id('evt');
  INSERT INTO webhook_deliveries (id, event_id, endpoint_id, type, generation_id, snapshot)
    SELECT rendergate_new_id('msg'), evt, e.id, kind, NEW.id, row_to_json(NEW)
    FROM webhook_endpoints e
    WHERE e.account_id = NEW.account_id AND e.enabled AND e.deleted_at IS NULL AND e.mode = NEW.mode
      AND kind = ANY (e.events);
  IF FOUND THEN PERFORM pg_notify('rendergate_webhooks', ''); END IF;
  RETURN NULL;
END $$;

-- rendergate_create_generations as migrations/019 defines it, with one change: a test item is
-- created final unless a TEST endpoint of its account takes `generation.started` or
-- `generation.succeeded` (`AND e.mode = 'test'` in that probe). Live endpoints never receive a test
-- render's events, so they no longer keep the account's test renders from being made in the create.
CREATE OR REPLACE FUNCTION rendergate_create_generations(p_items json, p_time_zone text)
RETURNS TABLE (idx integer, outcome text, generation_id text, inputs json, created_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  it record;
  prior record;
  made record;
  is_test boolean;
  is_final boolean;
  done_at timestamptz;
  idem_key text;
  today date := (now() AT TIME ZONE p_time_zone)::date;
BEGIN
  PERFORM 1 FROM accounts a
    WHERE a.id IN (SELECT x.account_id FROM json_to_recordset(p_items) AS x(account_id text))
    ORDER BY a.id FOR UPDATE;

  FOR it IN
    SELECT * FROM json_to_recordset(p_items) AS x(i integer, id text, ledger_id text, account_id text, key_id text,
      idem text, hash text, model_id text, inputs json, cost bigint, deadline_s integer, cap bigint,
      mode text, short boolean, trace_parent text, out_text text, out_key text, out_ct text,
      out_bytes bigint, out_etag text, keep_s integer)
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

    -- A test render is never claimed by a worker (run_after 'infinity'): the service makes it itself,
    -- here when its result is given and no test endpoint waits for the events of a change.
    is_final := is_test AND (it.out_text IS NOT NULL OR it.out_key IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.account_id = it.account_id
        AND e.enabled AND e.deleted_at IS NULL AND e.mode = 'test'
        AND e.events && ARRAY['generation.started', 'generation.succeeded']);
    done_at := CASE WHEN is_final THEN clock_timestamp() END;
    INSERT INTO generations AS g (id, account_id, key_id, usage_day, model_id, inputs, cost_cents, deadline_at,
        mode, run_after, trace_parent, status, started_at, completed_at, progress, text_output, content_key,
        content_type, content_bytes, content_etag, expires_at)
      VALUES (it.id, it.account_id, it.key_id, CASE WHEN it.key_id IS NULL THEN NULL ELSE today END,
        it.model_id, it.inputs, it.cost, now() + make_interval(secs => it.deadline_s),
        CASE WHEN is_test THEN 'test' ELSE 'live' END, CASE WHEN is_test THEN 'infinity'::timestamptz ELSE now() END,
        it.trace_parent, CASE WHEN is_final THEN 'succeeded' ELSE 'queued' END, done_at, done_at,
        CASE WHEN is_final THEN 1 END,
        CASE WHEN is_final THEN it.out_text END, CASE WHEN is_final THEN it.out_key END,
        CASE WHEN is_final AND it.out_key IS NOT NULL THEN it.out_ct END,
        CASE WHEN is_final AND it.out_key IS NOT NULL THEN it.out_bytes END,
        CASE WHEN is_final AND it.out_key IS NOT NULL THEN it.out_etag END,
        CASE WHEN is_final AND it.out_key IS NOT NULL AND coalesce(it.keep_s, 0) > 0
          THEN now() + make_interval(secs => it.keep_s) END)
      RETURNING g.inputs, g.created_at INTO made;
    IF it.cost > 0 AND NOT is_test THEN
      INSERT INTO ledger_entries (id, account_id, kind, amount_cents, generation_id)
      VALUES (it.ledger_id, it.account_id, 'charge', it.cost, it.id);
    END IF;
    INSERT INTO idempotency_keys (account_id, key, request_hash, generation_id)
    VALUES (it.account_id, idem_key, decode(it.hash, 'hex'), it.id);
    outcome := CASE WHEN is_final THEN 'created_final' ELSE 'created' END;
    generation_id := it.id;
    inputs := made.inputs;
    created_at := made.created_at;
    RETURN NEXT;
  END LOOP;
END $$;
