-- Every process caches generations that clients poll (src/services/generation-cache.ts) and drops its
-- copy when this trigger says the row changed in a way a client can see. A trigger rather than a NOTIFY
-- beside each UPDATE: no write path, present or future, can forget it. Lease renewals, retries and
-- hand-backs change nothing visible and send nothing.
--
-- One exception: the claim that first sets started_at does not fire it. A NOTIFY in a transaction takes
-- a cluster-wide lock held through the commit's WAL flush, and claims (asynchronous commits, on the
-- dispatch path) would queue behind every durable commit that notifies. The worker sends that
-- notification itself once the claim has committed (src/queue/notify-after-commit.ts).
CREATE FUNCTION rendergate_generation_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('rendergate_generation_changed', OLD.id);
  RETURN NULL;
END $$;

CREATE TRIGGER generation_deleted AFTER DELETE ON generations FOR EACH ROW EXECUTE FUNCTION rendergate_generation_changed();

CREATE TRIGGER generation_changed AFTER UPDATE ON generations FOR EACH ROW
  WHEN (ROW(OLD.status, OLD.cost_cents, OLD.refunded_cents, OLD.content_key, OLD.content_type,
        OLD.content_bytes, OLD.content_etag, OLD.text_output, OLD.error_code, OLD.error_message,
        OLD.completed_at, OLD.deleted_at, OLD.account_id)
    IS DISTINCT FROM ROW(NEW.status, NEW.cost_cents, NEW.refunded_cents, NEW.content_key, NEW.content_type,
        NEW.content_bytes, NEW.content_etag, NEW.text_output, NEW.error_code, NEW.error_message,
        NEW.completed_at, NEW.deleted_at, NEW.account_id))
  EXECUTE FUNCTION rendergate_generation_changed();
