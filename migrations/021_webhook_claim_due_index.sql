-- The webhook claim (src/db/webhook-deliveries.ts) takes each open endpoint's first due deliveries
-- through webhook_deliveries_endpoint_due (endpoint, due time). webhook_deliveries_due held every
-- endpoint's pending deliveries in due order alone: once statistics were gathered on an outbox filled in
-- time order, the planner judged a walk of it, filtered by endpoint, cheaper than the endpoint's own
-- index, and that walk read another account's whole backlog before reaching a delivery due after it
-- (9,000 rows a claim in test/integration/webhooks/claim-cost.test.ts; a claim 0.2 ms calm, 4–24 ms
-- beside a hostile account in the soak). Nothing else reads it. webhook_deliveries_leased was kept by
-- migration 020 for the claim of the release before it, which no release since runs. Each index also
-- took a new entry at every claim and every attempt recorded.
DROP INDEX IF EXISTS webhook_deliveries_due;
DROP INDEX IF EXISTS webhook_deliveries_leased;
