-- Fair, bounded webhook deliveries (docs/api.md "Abuse limits"). `last_error` is the one sentence on a
-- delivery's last failed attempt. An endpoint counts its failed attempts in a row; after a few it is
-- paused (`paused_until`, growing with each further failure, reset by a success), so its deliveries
-- wait instead of taking the dispatchers' slots. The partial indexes serve the claim: the attempts in
-- flight per endpoint and per account, and each endpoint's first due deliveries.
ALTER TABLE webhook_deliveries ADD COLUMN last_error text;
ALTER TABLE webhook_endpoints ADD COLUMN failures_in_row integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN paused_until timestamptz;
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (endpoint_id)
  WHERE status = 'pending' AND lease_until IS NOT NULL;
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at, id)
  WHERE status = 'pending';
