-- Budgets and alerts (docs/billing.md "Budgets", "Alerts"). A budget is a limit in cents over a
-- period for the account, one member (a person) or one key; `budget_usage` is what was spent in
-- each of its periods, counted by the ledger's charge (src/ledger/sql/create_generations.sql) under
-- the account's lock and given back by refunds (src/ledger/spend.ts). A usage row lives only as
-- long as its budget (ON DELETE CASCADE): while the budget exists, its current row holds the net
-- spend of the period (the row of a budget set mid-period starts from the renders charged in it).
CREATE TABLE budgets (
  account_id  text NOT NULL REFERENCES accounts (id),
  scope       text NOT NULL CHECK (scope IN ('account', 'member', 'key')),
  subject_id  text NOT NULL,
  period      text NOT NULL CHECK (period IN ('day', 'week', 'month', 'total')),
  -- at most 10^12 cents (MAX_CENTS of the admin API): a larger limit is a mistake, not a budget
  limit_cents bigint NOT NULL CHECK (limit_cents BETWEEN 0 AND 1000000000000),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  -- a person is a member of several accounts: their budget is one account's
  PRIMARY KEY (account_id, scope, subject_id, period)
);

-- `alerted_80`, `alerted_100`: the thresholds reached in this period, each alerted once.
CREATE TABLE budget_usage (
  account_id   text NOT NULL,
  scope        text NOT NULL,
  subject_id   text NOT NULL,
  period       text NOT NULL,
  period_start date NOT NULL,
  spent_cents  bigint NOT NULL DEFAULT 0 CHECK (spent_cents >= 0),
  alerted_80   boolean NOT NULL DEFAULT false,
  alerted_100  boolean NOT NULL DEFAULT false,
  PRIMARY KEY (account_id, scope, subject_id, period, period_start),
  FOREIGN KEY (account_id, scope, subject_id, period) REFERENCES budgets ON DELETE CASCADE
);

-- The low-balance alert's threshold; null: none.
ALTER TABLE accounts ADD COLUMN low_balance_cents bigint
  CHECK (low_balance_cents IS NULL OR low_balance_cents BETWEEN 0 AND 9007199254740991);

-- The outbox of account alerts (a low balance, a budget threshold): written in the transaction of
-- the change that crosses the threshold (src/ledger/sql/account_alert.sql), beside its webhook
-- deliveries; the worker mails and audits each once (src/services/alert-notices.ts).
CREATE TABLE account_alerts (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  kind        text NOT NULL CHECK (kind IN ('account.balance_low', 'budget.threshold_reached')),
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  lease_until timestamptz,
  done_at     timestamptz
);
CREATE INDEX account_alerts_pending ON account_alerts (created_at) WHERE done_at IS NULL;

-- An account event's delivery has no generation: its snapshot holds the event's data.
ALTER TABLE webhook_deliveries ALTER COLUMN generation_id DROP NOT NULL;

-- Endpoints created without `events` were given every type there was: they receive the new ones.
UPDATE webhook_endpoints
  SET events = events || ARRAY['account.balance_low', 'budget.threshold_reached']
  WHERE events @> ARRAY['generation.started', 'generation.succeeded', 'generation.failed',
                        'generation.refunded'];
