-- The server of a model's pool a running render was given at claim (src/queue/pool-claim.ts): counted
-- per server, cluster-wide, so each server takes at most its `concurrencyPerUrl` renders at once.
ALTER TABLE generations ADD COLUMN backend_url text;
