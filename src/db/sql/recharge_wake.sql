-- rendergate_recharge_wake: wakes the workers' auto-recharge (services/auto-recharge-sweep.ts)
-- when a change takes an account's balance below its threshold (docs/billing.md "Auto-recharge").
-- This file is the function's one current body, with its trigger (src/db/sql-functions.ts).
--
-- The WHEN clause reads only the updated row (accounts.recharge_below_cents is null unless
-- auto-recharge is on), so a charge of an account without it pays no call. A lost notification
-- costs the sweep's poll, never a recharge.
CREATE OR REPLACE FUNCTION rendergate_recharge_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('rendergate_recharge', NEW.id);
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER accounts_recharge_wake AFTER UPDATE OF balance_cents ON accounts
  FOR EACH ROW
  WHEN (NEW.recharge_below_cents IS NOT NULL AND NEW.balance_cents < NEW.recharge_below_cents
        AND OLD.balance_cents >= NEW.recharge_below_cents)
  EXECUTE FUNCTION rendergate_recharge_wake();
