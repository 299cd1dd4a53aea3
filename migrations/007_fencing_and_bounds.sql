-- Issue 11.
-- Balances and amounts stay within JavaScript's safe integers (2^53 - 1): node-postgres reads a bigint
-- into a Number, and past 2^53 a balance would be read wrong (and an addition could round). The admin
-- API refuses a credit that would pass it; these constraints make it impossible whatever the path.
ALTER TABLE accounts ADD CONSTRAINT accounts_balance_safe CHECK (balance_cents <= 9007199254740991);
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_amount_safe CHECK (amount_cents <= 9007199254740991);

-- The per-account running limit (src/queue/account-limit.ts) counts an account's leased renders after
-- every claim round.
CREATE INDEX generations_leased_account ON generations (account_id) WHERE status = 'queued' AND lease_until IS NOT NULL;

-- Attempts of a render that ended because fetching its input images timed out: the second one is final
-- (src/queue/worker.ts), so a slow input server cannot hold worker slots for every attempt.
ALTER TABLE generations ADD COLUMN fetch_timeouts smallint NOT NULL DEFAULT 0;
