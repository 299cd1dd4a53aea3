-- rendergate_claim_limited: claims one job of a model with a concurrency limit or a pool of
-- servers (queue/claim.ts "Model concurrency", queue/pool-claim.ts), in one round trip. This file
-- is the function's one current body (src/db/sql-functions.ts).
--
-- It takes the model's claim lock (held to the end of the call's own transaction, its commit), then
-- counts the model's running renders: each statement of a PL/pgSQL function takes a new snapshot
-- under READ COMMITTED, so the count sees every claim of the model committed before the lock was
-- granted, as the transaction it replaces (BEGIN, lock, count, claim, COMMIT: five round trips) did.
--
--   p_limit    the model's limit, cluster-wide; null: none (a pool bounds it by its servers alone)
--   p_urls     the pool's healthy servers in the claimer's order of preference for a tie (the one
--              it gave a render least recently first); null: a model without a pool
--   p_per_url  renders each server takes at once
--   p_alone    claim it only if no other job is runnable: the job a create of this process just
--              queued, claimed without the batch statement (queue/claim.ts claimAlone), which
--              would have ranked it first as the only candidate
-- The server given is the one with the fewest running renders below p_per_url, ties in p_urls's
-- order (pool-claim.ts serverPreference). No row: the model is at its limit, every server is full, or
-- the job is no longer runnable (claimed, cancelled, deleted).
CREATE OR REPLACE FUNCTION rendergate_claim_limited(
  p_id text, p_model text, p_limit integer, p_urls text[], p_per_url integer, p_owner text,
  p_lease_seconds integer, p_alone boolean)
RETURNS TABLE (id text, account_id text, model_id text, inputs json, attempts integer,
  backend_url text, trace_parent text, waited float8, messages jsonb, response_format jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_url text;
BEGIN
  IF p_alone AND EXISTS (
    SELECT 1 FROM generations g
    WHERE g.status = 'queued' AND g.id <> p_id AND g.run_after <= now()
      AND (g.lease_until IS NULL OR g.lease_until < now())) THEN
    RETURN;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('model:' || p_model, 0));
  IF p_limit IS NOT NULL AND (
    SELECT count(*) FROM generations g
    WHERE g.model_id = p_model AND g.status = 'queued' AND g.lease_until IS NOT NULL
      AND g.lease_until >= now()) >= p_limit THEN
    RETURN;
  END IF;
  IF p_urls IS NOT NULL THEN
    SELECT u.url INTO v_url
    FROM unnest(p_urls) WITH ORDINALITY AS u (url, ord)
    LEFT JOIN (
      SELECT g.backend_url, count(*) AS n FROM generations g
      WHERE g.model_id = p_model AND g.status = 'queued' AND g.lease_until IS NOT NULL
        AND g.lease_until >= now() AND g.backend_url IS NOT NULL
      GROUP BY g.backend_url) r ON r.backend_url = u.url
    WHERE coalesce(r.n, 0) < p_per_url
    ORDER BY coalesce(r.n, 0), u.ord
    LIMIT 1;
    IF v_url IS NULL THEN
      RETURN;
    END IF;
  END IF;
  RETURN QUERY
  UPDATE generations g SET attempts = g.attempts + 1, lease_owner = p_owner,
    lease_until = now() + make_interval(secs => p_lease_seconds),
    started_at = coalesce(g.started_at, clock_timestamp()), backend_url = v_url
  WHERE g.id = (
    SELECT q.id FROM generations q
    WHERE q.id = p_id AND q.status = 'queued' AND q.run_after <= now()
      AND (q.lease_until IS NULL OR q.lease_until < now())
    FOR UPDATE SKIP LOCKED)
  RETURNING g.id, g.account_id, g.model_id, g.inputs, g.attempts, g.backend_url, g.trace_parent,
    extract(epoch FROM now() - g.run_after)::float8,
    (SELECT m.messages FROM generation_messages m WHERE m.generation_id = g.id),
    (SELECT m.response_format FROM generation_messages m WHERE m.generation_id = g.id);
END
$$;
