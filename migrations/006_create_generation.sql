-- A create in one round trip: the whole transaction of src/services/generations.ts `create` as one
-- function, called in its own (implicit) transaction. It was eleven statements, each a round trip
-- between Node and Postgres; the function runs the same guarded statements in the same order.
--
-- Outcomes: 'created' (all rows written; the caller wakes the workers once committed, src/queue/wake.ts), 'replayed' (this key was used
-- with the same body: its generation), 'reused' (used with another body), 'in_use' (a request with this
-- key is in its transaction right now). A short balance or a reached daily cap raises RG402 / RG409,
-- which rolls every row back; the caller then reads the figures for its error message.
--
-- The 202 body of a replay is rebuilt from the generation (as it was at creation: queued, nothing
-- refunded), so the idempotency record no longer keeps a copy of it.
ALTER TABLE idempotency_keys DROP COLUMN response;

CREATE FUNCTION rendergate_create_generation(
  p_id text, p_ledger_id text, p_account_id text, p_key_id text, p_idempotency_key text, p_request_hash bytea,
  p_model_id text, p_inputs json, p_cost bigint, p_deadline_seconds integer, p_time_zone text, p_daily_cap bigint)
RETURNS TABLE (outcome text, generation_id text, inputs json, created_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  prior record;
  day_row record;
  made record;
BEGIN
  -- A second request with this key while the first is in its transaction: refuse rather than wait.
  IF NOT pg_try_advisory_xact_lock(hashtextextended('idem:' || p_account_id || ':' || p_idempotency_key, 0)) THEN
    RETURN QUERY SELECT 'in_use', NULL::text, NULL::json, NULL::timestamptz;
    RETURN;
  END IF;
  SELECT i.request_hash, i.generation_id INTO prior FROM idempotency_keys i
    WHERE i.account_id = p_account_id AND i.key = p_idempotency_key;
  IF FOUND THEN
    RETURN QUERY SELECT CASE WHEN prior.request_hash = p_request_hash THEN 'replayed' ELSE 'reused' END,
      prior.generation_id, NULL::json, NULL::timestamptz;
    RETURN;
  END IF;

  -- The rows first, the contended locks last: the account's balance row and the key's day row are held
  -- only from their guarded UPDATE to the commit, so creates on one account queue for the shortest time.
  INSERT INTO generations AS g (id, account_id, key_id, usage_day, model_id, inputs, cost_cents, deadline_at)
    VALUES (p_id, p_account_id, p_key_id, (now() AT TIME ZONE p_time_zone)::date, p_model_id, p_inputs, p_cost,
            now() + make_interval(secs => p_deadline_seconds))
    RETURNING g.inputs, g.created_at INTO made;
  IF p_cost > 0 THEN
    INSERT INTO ledger_entries (id, account_id, kind, amount_cents, generation_id)
    VALUES (p_ledger_id, p_account_id, 'charge', p_cost, p_id);
  END IF;
  INSERT INTO idempotency_keys (account_id, key, request_hash, generation_id)
  VALUES (p_account_id, p_idempotency_key, p_request_hash, p_id);

  -- Count the price against the key's day; the WHERE refuses an update that would pass the cap.
  IF p_daily_cap IS NOT NULL AND p_cost > p_daily_cap THEN
    RAISE EXCEPTION 'daily cap' USING ERRCODE = 'RG409';
  END IF;
  INSERT INTO key_day_usage AS u (key_id, day, spent_cents) VALUES (p_key_id, (now() AT TIME ZONE p_time_zone)::date, p_cost)
  ON CONFLICT (key_id, day) DO UPDATE SET spent_cents = u.spent_cents + EXCLUDED.spent_cents
    WHERE p_daily_cap IS NULL OR u.spent_cents + EXCLUDED.spent_cents <= p_daily_cap
  RETURNING u.day INTO day_row;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'daily cap' USING ERRCODE = 'RG409';
  END IF;
  UPDATE accounts SET balance_cents = balance_cents - p_cost WHERE id = p_account_id AND balance_cents >= p_cost;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'balance' USING ERRCODE = 'RG402';
  END IF;
  RETURN QUERY SELECT 'created', p_id, made.inputs, made.created_at;
END $$;
