-- rendergate_generation_event: the outbox trigger on generations (docs/architecture.md "Webhooks").
-- This file is the function's one current body: the migrator applies it whenever its text changes
-- (src/db/sql-functions.ts). Migration 009 holds its first body, as it ran then.
--
-- Each event goes to the endpoints of the render's mode only: a test render's events (livemode
-- false) to test endpoints, a live render's to live ones. The probe that spares accounts without
-- endpoints looks at the render's mode too, so a test render of an account with live endpoints only
-- costs that one index probe and makes no ids.
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
