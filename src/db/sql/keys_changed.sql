-- rendergate_keys_changed and its statement trigger: every statement that changes what a key's
-- lookup reads (db/api-keys.ts keyByHash: the key's row, and its account's other live keys for the
-- limit they share) tells the API processes, which drop the keys they keep in memory
-- (services/key-resolver.ts). This file is the function's one current body and its trigger's
-- definition (src/db/sql-functions.ts).
--
-- Not on last_used_at, which the rate limiter's lease writes as keys are used
-- (db/rate-windows.ts): a NOTIFY makes its transaction's commit wait for every other notifying one,
-- and a key in use would drop itself. Keys are made, revoked and changed rarely; one notification
-- per transaction is sent whatever the rows (PostgreSQL folds equal ones).
CREATE OR REPLACE FUNCTION rendergate_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('rendergate_keys', '');
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER api_keys_changed
  AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF id, account_id, name, key_hash, start, created_at,
    daily_cap_cents, rate_limit_per_minute, revoked_at, mode ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION rendergate_keys_changed();
