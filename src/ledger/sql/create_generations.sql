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
--   budgets      the budgets in force for the item (migrations/036): the account's, its member's
--                (`person_id`, the studio member who starts it, or the key's creator) and its
--                key's; a test item's only its key's. Checked before the cap and the balance (a
--                refusal answers the budgets it would exceed in `inputs`: { budgets: [...] }; the
--                caller reads a short balance or a reached cap first, as the contract orders
--                them), counted once the balance is taken. The common case (every budget's period
--                row there, no limit passed, no threshold reached) is one statement that checks
--                and counts at once, given back (sql/budgets_give_back.sql) if the cap or the
--                balance then refuses. An account without budgets pays one index probe. Every
--                render gets its `usage_day` (the day its budgets and refunds count it on) and
--                `started_by` (its member).
--   alerts       a budget reaching 80 % or 100 % of its limit (once per period each), a live charge
--                taking the balance below the account's low_balance_cents: an account alert
--                (sql/account_alert.sql) in this transaction.
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
  in_force boolean;
  over json;
  -- the item's budgets in force, read once by the check and used again by the count and alerts
  b_scope text[];
  b_subject text[];
  b_period text[];
  b_start date[];
  b_limit bigint[];
  b_spent bigint[];
  b_a80 boolean[];
  b_a100 boolean[];
  alerting boolean;
  counted integer;
  -- the fast path's: the budgets in force, whether it counted them all, and the rows it counted
  n_force integer;
  fast boolean;
  f_scope text[];
  f_subject text[];
  f_period text[];
  f_start date[];
  made_rows integer;
  -- the balance a live charge left and the account's low-balance threshold (scalars: a record not
  -- yet assigned, as after a test item, cannot even be read in a test that would skip it)
  left_cents bigint;
  low_cents bigint;
BEGIN
  PERFORM 1 FROM accounts a
    WHERE a.id IN (SELECT x.account_id FROM json_to_recordset(p_items) AS x(account_id text))
    ORDER BY a.id FOR UPDATE;

  FOR it IN
    SELECT * FROM json_to_recordset(p_items) AS x(i integer, id text, ledger_id text,
      account_id text, key_id text, idem text, hash text, model_id text, inputs json, cost bigint,
      deadline_s integer, cap bigint, mode text, short boolean, trace_parent text, out_text text,
      out_key text, out_ct text, out_bytes bigint, out_etag text, keep_s integer, person_id text)
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

    -- The budgets in force, read under the account's lock (every writer that raises a budget's
    -- spend holds it): refused when the price would pass any of them. One statement reads them
    -- and their period's usage; the count below and any alert reuse what it read (under the same
    -- lock nothing changes them meanwhile), so a charge reads its budgets once.
    in_force := EXISTS (SELECT 1 FROM budgets x WHERE x.account_id = it.account_id);
    fast := false;
    IF in_force THEN
      -- The common case in one statement: every budget of the item has its period's row, and the
      -- price passes no limit and reaches no threshold not yet alerted. Those rows are counted at
      -- once (before the cap and the balance, which give them back if they refuse: `fast`).
      -- Anything else (a period's first charge, a limit, an alert) gives back what it counted
      -- and takes the full path below: the check, its refusal's details, the count after the
      -- balance, the alerts.
      WITH b AS (SELECT * FROM rendergate_render_budgets(it.account_id, it.key_id, NOT is_test,
          it.person_id, today)),
      c AS (
        UPDATE budget_usage AS u SET spent_cents = u.spent_cents + it.cost
          FROM b
         WHERE u.account_id = it.account_id AND u.scope = b.scope AND u.subject_id = b.subject_id
           AND u.period = b.period AND u.period_start = b.start
           AND u.spent_cents + it.cost <= b.limit_cents
           AND (b.limit_cents = 0
             OR ((u.alerted_80 OR (u.spent_cents + it.cost) * 5 < b.limit_cents * 4)
               AND (u.alerted_100 OR u.spent_cents + it.cost < b.limit_cents)))
        RETURNING u.scope, u.subject_id, u.period, u.period_start)
      SELECT (SELECT count(*) FROM b), count(*), array_agg(c.scope), array_agg(c.subject_id),
          array_agg(c.period), array_agg(c.period_start)
        INTO n_force, counted, f_scope, f_subject, f_period, f_start
        FROM c;
      fast := counted = n_force;
      in_force := n_force > 0;
      IF NOT fast AND counted > 0 THEN
        PERFORM rendergate_budgets_give_back(it.account_id, it.cost, f_scope, f_subject, f_period,
          f_start);
      END IF;
    END IF;
    IF in_force AND NOT fast THEN
      SELECT json_agg(json_build_object('scope', x.scope, 'id', x.subject_id,
          'period', x.period, 'limitCents', x.limit_cents, 'spentCents', x.spent,
          'costCents', it.cost, 'resetsAt', CASE x.period
            WHEN 'day' THEN x.start + 1 WHEN 'week' THEN x.start + 7
            WHEN 'month' THEN (x.start + interval '1 month')::date END::timestamp
            AT TIME ZONE p_time_zone) ORDER BY x.scope, x.period)
          FILTER (WHERE x.spent + it.cost > x.limit_cents),
        array_agg(x.scope), array_agg(x.subject_id), array_agg(x.period), array_agg(x.start),
        array_agg(x.limit_cents), array_agg(x.spent + it.cost), array_agg(x.a80),
        array_agg(x.a100),
        -- whether this price reaches a threshold not yet alerted in its period
        bool_or(x.limit_cents > 0
          AND ((NOT x.a80 AND (x.spent + it.cost) * 5 >= x.limit_cents * 4)
            OR (NOT x.a100 AND x.spent + it.cost >= x.limit_cents)))
        INTO over, b_scope, b_subject, b_period, b_start, b_limit, b_spent, b_a80, b_a100,
          alerting
        FROM (SELECT y.scope, y.subject_id, y.period, y.limit_cents, y.start,
                coalesce(u.spent_cents, 0) AS spent, coalesce(u.alerted_80, false) AS a80,
                coalesce(u.alerted_100, false) AS a100
              FROM rendergate_render_budgets(it.account_id, it.key_id, NOT is_test,
                it.person_id, today) y
              LEFT JOIN budget_usage u ON u.account_id = it.account_id AND u.scope = y.scope
                AND u.subject_id = y.subject_id AND u.period = y.period
                AND u.period_start = y.start) x;
      IF over IS NOT NULL THEN
        outcome := 'refused';
        inputs := json_build_object('budgets', over);
        RETURN NEXT;
        CONTINUE;
      END IF;
      -- budgets of the account, none of this item's (another member's, another key's)
      in_force := b_scope IS NOT NULL;
    END IF;

    -- Count the price against the key's day; the WHERE refuses an update that would pass the cap.
    -- A studio render (no key) has no day to count against. (Each refusal from here on gives back
    -- the budgets the fast path counted.)
    IF it.key_id IS NOT NULL THEN
      IF it.cap IS NOT NULL AND it.cost > it.cap THEN
        IF fast AND counted > 0 THEN
          PERFORM rendergate_budgets_give_back(it.account_id, it.cost, f_scope, f_subject,
            f_period, f_start);
        END IF;
        outcome := 'refused';
        RETURN NEXT;
        CONTINUE;
      END IF;
      -- The day's row exists but for the key's first charge of the day: an UPDATE, then (a missing
      -- row or a reached cap) an INSERT that a row already there refuses.
      UPDATE key_day_usage AS u SET spent_cents = u.spent_cents + it.cost
        WHERE u.key_id = it.key_id AND u.day = today
          AND (it.cap IS NULL OR u.spent_cents + it.cost <= it.cap);
      IF NOT FOUND THEN
        INSERT INTO key_day_usage (key_id, day, spent_cents) VALUES (it.key_id, today, it.cost)
          ON CONFLICT DO NOTHING;
      END IF;
      IF NOT FOUND THEN
        IF fast AND counted > 0 THEN
          PERFORM rendergate_budgets_give_back(it.account_id, it.cost, f_scope, f_subject,
            f_period, f_start);
        END IF;
        outcome := 'refused';
        RETURN NEXT;
        CONTINUE;
      END IF;
    END IF;
    low_cents := NULL;
    IF is_test THEN
      PERFORM 1 WHERE NOT coalesce(it.short, false);
    ELSE
      UPDATE accounts SET balance_cents = balance_cents - it.cost
        WHERE id = it.account_id AND balance_cents >= it.cost AND shortfall_cents = 0
        RETURNING balance_cents, low_balance_cents INTO left_cents, low_cents;
    END IF;
    IF NOT FOUND THEN
      -- Give back the day's count taken just above (this transaction holds the row).
      UPDATE key_day_usage SET spent_cents = spent_cents - it.cost
        WHERE key_id = it.key_id AND day = today;
      IF fast AND counted > 0 THEN
        PERFORM rendergate_budgets_give_back(it.account_id, it.cost, f_scope, f_subject, f_period,
          f_start);
      END IF;
      outcome := 'refused';
      RETURN NEXT;
      CONTINUE;
    END IF;
    -- The balance crossed the low-balance alert's threshold (from at least it to below it).
    IF low_cents IS NOT NULL AND left_cents < low_cents AND left_cents + it.cost >= low_cents THEN
      PERFORM rendergate_account_alert(it.account_id, 'account.balance_low', 'live',
        jsonb_build_object('accountId', it.account_id, 'balanceCents', left_cents,
          'thresholdCents', low_cents));
    END IF;

    -- Count the price in every budget in force, with the thresholds it reaches (each alerted once
    -- per period). A budget's row of this period exists but after its first charge in it, so an
    -- UPDATE counts it (an upsert's conflict path locks the row, then updates it: two WAL records
    -- a row, which an UPDATE does in one), and an INSERT makes the rows missing. Both WHEREs hold
    -- the limit whatever a caller did: a row they refuse (fewer rows counted than budgets) is a
    -- bug, not a refusal.
    IF in_force AND NOT fast THEN
      UPDATE budget_usage AS u SET spent_cents = u.spent_cents + it.cost,
          alerted_80 = u.alerted_80 OR (x.lim > 0 AND x.spent * 5 >= x.lim * 4),
          alerted_100 = u.alerted_100 OR (x.lim > 0 AND x.spent >= x.lim)
        FROM unnest(b_scope, b_subject, b_period, b_start, b_limit, b_spent)
          AS x(scope, subject_id, period, start, lim, spent)
       WHERE u.account_id = it.account_id AND u.scope = x.scope AND u.subject_id = x.subject_id
         AND u.period = x.period AND u.period_start = x.start
         AND u.spent_cents + it.cost <= x.lim;
      GET DIAGNOSTICS counted = ROW_COUNT;
      IF counted <> cardinality(b_scope) THEN
        INSERT INTO budget_usage AS u (account_id, scope, subject_id, period, period_start,
            spent_cents, alerted_80, alerted_100)
          SELECT it.account_id, x.scope, x.subject_id, x.period, x.start, it.cost,
              x.lim > 0 AND x.spent * 5 >= x.lim * 4, x.lim > 0 AND x.spent >= x.lim
            FROM unnest(b_scope, b_subject, b_period, b_start, b_limit, b_spent)
              AS x(scope, subject_id, period, start, lim, spent)
           WHERE it.cost <= x.lim
        ON CONFLICT DO NOTHING;
        GET DIAGNOSTICS made_rows = ROW_COUNT;
        counted := counted + made_rows;
      END IF;
      IF counted <> cardinality(b_scope) THEN
        RAISE EXCEPTION 'a budget of account % passed under its lock', it.account_id;
      END IF;
      IF alerting THEN
        PERFORM rendergate_account_alert(it.account_id, 'budget.threshold_reached',
            CASE WHEN is_test THEN 'test' ELSE 'live' END,
            jsonb_build_object('scope', x.scope, 'id', x.subject_id, 'period', x.period,
              'limitCents', x.lim, 'spentCents', x.spent, 'percent', t.pct))
          FROM unnest(b_scope, b_subject, b_period, b_limit, b_spent, b_a80, b_a100)
              AS x(scope, subject_id, period, lim, spent, a80, a100)
            CROSS JOIN (VALUES (80), (100)) AS t(pct)
          WHERE x.lim > 0
            AND ((t.pct = 80 AND NOT x.a80 AND x.spent * 5 >= x.lim * 4)
              OR (t.pct = 100 AND NOT x.a100 AND x.spent >= x.lim));
      END IF;
    END IF;

    -- A test render is never claimed by a worker (run_after 'infinity'): the service makes it
    -- itself, here when its result is given and no test endpoint (the only ones a test render's
    -- events go to) waits for the events of a change.
    -- (An IF, not one expression: PostgreSQL planned the expression's subquery again at every
    -- item, live ones too, 11 µs each.)
    is_final := false;
    IF is_test AND (it.out_text IS NOT NULL OR it.out_key IS NOT NULL) THEN
      is_final := NOT EXISTS (SELECT 1 FROM webhook_endpoints e
        WHERE e.account_id = it.account_id AND e.enabled AND e.deleted_at IS NULL
          AND e.mode = 'test' AND e.events && ARRAY['generation.started', 'generation.succeeded']);
    END IF;
    done_at := CASE WHEN is_final THEN clock_timestamp() END;
    INSERT INTO generations AS g (id, account_id, key_id, usage_day, model_id, inputs, cost_cents,
        deadline_at, mode, run_after, trace_parent, status, started_at, completed_at, progress,
        text_output, content_key, content_type, content_bytes, content_etag, expires_at, started_by)
      VALUES (it.id, it.account_id, it.key_id, today,
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
          THEN now() + make_interval(secs => it.keep_s) END, it.person_id)
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
