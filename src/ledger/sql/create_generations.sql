-- rendergate_create_generations: the charge and the test record of the ledger (src/ledger/), for a
-- batch of creates. This file is the function's one current body: the migrator applies it whenever
-- its text changes (src/db/sql-functions.ts). Migrations 006, 011, 014, 018 and 019 hold its
-- earlier bodies, as they ran then; a database ends with this one whichever of them it ran.
--
-- Group commit: every create waiting in an API process comes in one call
-- (src/ledger/create-batch.ts), one transaction and one commit, instead of a dozen statements and a
-- WAL flush each.
--
-- Each item is decided on its own, exactly as a single create would be: the same guarded
-- statements, no item's refusal touches another's rows, and the function never raises for a
-- refusal.
--   idempotency  an account's key is taken once: another transaction holding it answers 'in_use';
--                a key used before answers 'replayed' (same request hash) or 'reused'. A test key's
--                keys live apart from live ones ('test ' + key: a header value has no space).
--   day cap      the price counts against the key's day (key_day_usage), refused past its cap; a
--                studio render (no key) counts against no day.
--   balance      a live item takes its price from the balance, refused when the balance is short or
--                the account owes a shortfall (docs/billing.md); a test item moves no money and
--                writes no ledger entry (`short`, an input asking for rendergate:insufficient,
--                refuses it as a short balance would); only its key's day counts it.
--   generation   inserted queued, with a 'charge' entry of its price (a live item above 0). A test
--                render is never claimed by a worker (run_after 'infinity'): the API process makes
--                it, and an item given its result (`out_text`, or `out_key`, `out_ct`, `out_bytes`,
--                `out_etag`, and `keep_s`, the seconds a file is kept, 0: forever) is inserted
--                already succeeded, outcome 'created_final', when its account has no endpoint
--                taking `generation.started` or `generation.succeeded` (those events come from the
--                change of an existing row, migrations/009; src/queue/test-render.ts records such a
--                render after its create). Its started_at and completed_at are one instant, after
--                its created_at.
--   trace        `trace_parent`, the W3C traceparent of the create's span, goes on the row so the
--                worker continues its trace (NULL when tracing is off).
--
-- Outcomes per item: 'created', 'created_final', 'replayed', 'reused', 'in_use', 'refused' (a short
-- balance or a reached daily cap: the caller reads which, for its message). The caller wakes the
-- workers once the batch has committed (src/queue/job-wake.ts).
--
-- Lock order (no deadlock between batches, creates and refunds): the batch's accounts first, in id
-- order, then, under its account's lock, each key's day row; refunds (src/ledger/refund.ts) take
-- the account before the day row too. Items are taken in (account, arrival) order.
--
-- The signature and the result stay what the previous release calls (docs/upgrades.md): it sends
-- items without the fields added since, which therefore default to what they meant before (an item
-- without `mode` is live, without a result is queued).

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
    SELECT * FROM json_to_recordset(p_items) AS x(i integer, id text, ledger_id text,
      account_id text, key_id text, idem text, hash text, model_id text, inputs json, cost bigint,
      deadline_s integer, cap bigint, mode text, short boolean, trace_parent text, out_text text,
      out_key text, out_ct text, out_bytes bigint, out_etag text, keep_s integer)
    ORDER BY x.account_id, x.i
  LOOP
    idx := it.i;
    is_test := coalesce(it.mode = 'test', false);
    idem_key := CASE WHEN is_test THEN 'test ' || it.idem ELSE it.idem END;
    generation_id := NULL;
    inputs := NULL;
    created_at := NULL;

    -- Another transaction has a request with this key in flight: refuse rather than wait. (Within
    -- this batch the lock is ours already, and the first item's record makes a second one a
    -- replay.)
    IF NOT pg_try_advisory_xact_lock(
        hashtextextended('idem:' || it.account_id || ':' || idem_key, 0)) THEN
      outcome := 'in_use';
      RETURN NEXT;
      CONTINUE;
    END IF;
    SELECT i.request_hash, i.generation_id INTO prior FROM idempotency_keys i
      WHERE i.account_id = it.account_id AND i.key = idem_key;
    IF FOUND THEN
      outcome := CASE WHEN prior.request_hash = decode(it.hash, 'hex')
        THEN 'replayed' ELSE 'reused' END;
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
      UPDATE key_day_usage SET spent_cents = spent_cents - it.cost
        WHERE key_id = it.key_id AND day = today;
      outcome := 'refused';
      RETURN NEXT;
      CONTINUE;
    END IF;

    -- A test render is never claimed by a worker (run_after 'infinity'): the service makes it
    -- itself, here when its result is given and no test endpoint (the only ones a test render's
    -- events go to) waits for the events of a change.
    is_final := is_test AND (it.out_text IS NOT NULL OR it.out_key IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM webhook_endpoints e
        WHERE e.account_id = it.account_id AND e.enabled AND e.deleted_at IS NULL
          AND e.mode = 'test' AND e.events && ARRAY['generation.started', 'generation.succeeded']);
    done_at := CASE WHEN is_final THEN clock_timestamp() END;
    INSERT INTO generations AS g (id, account_id, key_id, usage_day, model_id, inputs, cost_cents,
        deadline_at, mode, run_after, trace_parent, status, started_at, completed_at, progress,
        text_output, content_key, content_type, content_bytes, content_etag, expires_at)
      VALUES (it.id, it.account_id, it.key_id, CASE WHEN it.key_id IS NULL THEN NULL ELSE today END,
        it.model_id, it.inputs, it.cost, now() + make_interval(secs => it.deadline_s),
        CASE WHEN is_test THEN 'test' ELSE 'live' END,
        CASE WHEN is_test THEN 'infinity'::timestamptz ELSE now() END,
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
