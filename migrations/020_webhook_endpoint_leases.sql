-- The webhook claim (src/db/webhook-deliveries.ts) counts each endpoint's attempts in flight by the
-- leases its deliveries hold. This index holds leased deliveries only, by endpoint and lease end, so
-- the count reads those leases and nothing else: never the pending backlog, whatever the statistics
-- were when the claim's plan was made. (webhook_deliveries_leased stays while a previous release's
-- claim, which counts through it, may run beside this one during a rolling upgrade.)
CREATE INDEX webhook_deliveries_endpoint_lease ON webhook_deliveries (endpoint_id, lease_until)
  INCLUDE (status) WHERE lease_until IS NOT NULL;
