-- Webhook endpoints have a mode, as Stripe's do (docs/api.md "Webhooks", "Test keys"): a test
-- key creates, sees and deletes only test endpoints, a live key only live ones, and each endpoint
-- receives only the events of renders of its own mode. Every endpoint made before is live.
ALTER TABLE webhook_endpoints ADD COLUMN mode text NOT NULL DEFAULT 'live'
  CHECK (mode IN ('live', 'test'));

-- The outbox trigger's routing by mode, and the create's fast path looking at test endpoints
-- only, are in the functions' own files (src/db/sql/generation_event.sql,
-- src/ledger/sql/create_generations.sql), which the migrator applies after this migration.
