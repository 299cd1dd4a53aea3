-- rendergate_account_alert: one account alert (`account.balance_low`, `budget.threshold_reached`),
-- decided by the change that crossed its threshold and written in that change's transaction: a row
-- of the alerts outbox (migrations/036), which the worker mails and audits, and the webhook
-- deliveries of the event to the account's endpoints of `p_mode` that take its type (the outbox of
-- migrations/009; the snapshot holds the event's data). The worker polls the alerts outbox (its
-- partial index is empty but for a moment): no NOTIFY, which would serialise commits
-- cluster-wide (migrations/005); the webhooks' one is sent only when a delivery was written, as the
-- trigger does.
-- This file is the function's one current body (src/db/sql-functions.ts).
CREATE OR REPLACE FUNCTION rendergate_account_alert(p_account text, p_kind text, p_mode text,
  p_data jsonb)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  evt text := rendergate_new_id('evt');
BEGIN
  INSERT INTO account_alerts (id, account_id, kind, data)
    VALUES (rendergate_new_id('alr'), p_account, p_kind, p_data);
  INSERT INTO webhook_deliveries (id, event_id, endpoint_id, type, generation_id, snapshot)
    SELECT rendergate_new_id('msg'), evt, e.id, p_kind, NULL,
      json_build_object('mode', p_mode, 'data', p_data)
    FROM webhook_endpoints e
    WHERE e.account_id = p_account AND e.enabled AND e.deleted_at IS NULL AND e.mode = p_mode
      AND p_kind = ANY (e.events);
  IF FOUND THEN PERFORM pg_notify('rendergate_webhooks', ''); END IF;
END $$;
