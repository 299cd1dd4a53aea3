-- Webhooks (CONTRACT.md "Webhooks"): endpoints, and an outbox of deliveries written by a trigger in the
-- same transaction as the status change that causes them, so no write path can forget one and no crash
-- can lose one. Workers deliver them (src/webhooks/dispatcher.ts).

CREATE TABLE webhook_endpoints (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  url         text NOT NULL,
  events      text[] NOT NULL,
  secret      text NOT NULL,
  enabled     boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  deleted_at  timestamptz
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, id DESC) WHERE deleted_at IS NULL;

-- One row per (event, endpoint). `id` is the Standard Webhooks `webhook-id`, the same on every attempt;
-- `snapshot` is the generation's row at the change, so every attempt sends the same body.
CREATE TABLE webhook_deliveries (
  id                   text PRIMARY KEY,
  event_id             text NOT NULL,
  endpoint_id          text NOT NULL REFERENCES webhook_endpoints (id),
  type                 text NOT NULL,
  generation_id        text NOT NULL,
  snapshot             json NOT NULL,
  status               text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts             integer NOT NULL DEFAULT 0,
  last_response_status integer,
  created_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
  next_attempt_at      timestamptz DEFAULT clock_timestamp(),
  lease_owner          text,
  lease_until          timestamptz,
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);

-- Ids like the application's (prefix + UUIDv7 hex: 48 bits of Unix milliseconds, version 7, random
-- bits), made in SQL; uuidv7() itself is PostgreSQL 18 only.
CREATE FUNCTION rendergate_new_id(prefix text) RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT prefix || '_' || overlay(overlay(replace(gen_random_uuid()::text, '-', '')
    PLACING lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') FROM 1 FOR 12)
    PLACING '7' FROM 13 FOR 1)
$$;

-- The event of a change, if it is one: started (started_at first set), succeeded, failed, refunded.
-- An account without endpoints costs one index probe. A NOTIFY wakes the dispatchers only when a delivery
-- was written (a NOTIFY serialises commits cluster-wide: see migrations/005), so accounts without
-- webhooks, and every claim of theirs, never take that lock.
CREATE FUNCTION rendergate_generation_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  kind text;
  evt text;
BEGIN
  IF OLD.status = 'queued' AND NEW.status <> 'queued' THEN kind := 'generation.' || NEW.status;
  ELSIF OLD.status = 'succeeded' AND NEW.status = 'refunded' THEN kind := 'generation.refunded';
  ELSIF OLD.started_at IS NULL AND NEW.started_at IS NOT NULL THEN kind := 'generation.started';
  ELSE RETURN NULL;
  END IF;
  -- most accounts have no endpoint: one index probe, no ids made
  IF NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.account_id = NEW.account_id AND e.enabled AND e.deleted_at IS NULL) THEN
    RETURN NULL;
  END IF;
  evt := rendergate_new_id('evt');
  INSERT INTO webhook_deliveries (id, event_id, endpoint_id, type, generation_id, snapshot)
    SELECT rendergate_new_id('msg'), evt, e.id, kind, NEW.id, row_to_json(NEW)
    FROM webhook_endpoints e
    WHERE e.account_id = NEW.account_id AND e.enabled AND e.deleted_at IS NULL AND kind = ANY (e.events);
  IF FOUND THEN PERFORM pg_notify('rendergate_webhooks', ''); END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER generation_event AFTER UPDATE ON generations FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR (OLD.started_at IS NULL AND NEW.started_at IS NOT NULL))
  EXECUTE FUNCTION rendergate_generation_event();
