-- Uploads, progress, retention and the queue position (CONTRACT.md "v1 additions").

-- Images uploaded by an account, kept until expires_at. A deleted upload is marked first and its file
-- removed by the janitor, so that a crash between the two never leaves a row pointing at nothing.
CREATE TABLE uploads (
  id            text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts (id),
  storage_key   text NOT NULL,
  content_type  text NOT NULL,
  size_bytes    bigint NOT NULL,
  width         integer NOT NULL,
  height        integer NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  deleted_at    timestamptz
);
CREATE INDEX uploads_expiry ON uploads (expires_at);
CREATE INDEX uploads_deleted ON uploads (id) WHERE deleted_at IS NOT NULL;

-- progress: 0..1 reported by the running attempt (written under its lease and attempt number).
-- expires_at: when a succeeded render's file is removed (null: kept forever); content_removed_at: when
-- the janitor removed it (content_key stays, so contentUrl stays and /content answers 410).
ALTER TABLE generations ADD COLUMN progress real, ADD COLUMN expires_at timestamptz, ADD COLUMN content_removed_at timestamptz;
CREATE INDEX generations_expiry ON generations (expires_at) WHERE content_removed_at IS NULL AND expires_at IS NOT NULL;
-- queuePosition: the waiting (never started) renders of a model, by id (time-ordered); counted with an
-- index-only scan that stops at a bound, never across the whole queue.
CREATE INDEX generations_waiting ON generations (model_id, id) WHERE status = 'queued' AND started_at IS NULL;

-- The change trigger of migrations/005 with the new visible columns, so that caches and waiters see them.
DROP TRIGGER generation_changed ON generations;
CREATE TRIGGER generation_changed AFTER UPDATE ON generations FOR EACH ROW
  WHEN (ROW(OLD.status, OLD.cost_cents, OLD.refunded_cents, OLD.content_key, OLD.content_type,
        OLD.content_bytes, OLD.content_etag, OLD.text_output, OLD.error_code, OLD.error_message,
        OLD.completed_at, OLD.deleted_at, OLD.account_id, OLD.progress, OLD.expires_at, OLD.content_removed_at)
    IS DISTINCT FROM ROW(NEW.status, NEW.cost_cents, NEW.refunded_cents, NEW.content_key, NEW.content_type,
        NEW.content_bytes, NEW.content_etag, NEW.text_output, NEW.error_code, NEW.error_message,
        NEW.completed_at, NEW.deleted_at, NEW.account_id, NEW.progress, NEW.expires_at, NEW.content_removed_at))
  EXECUTE FUNCTION rendergate_generation_changed();
