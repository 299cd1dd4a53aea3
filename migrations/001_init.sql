-- Rendergate schema. Money rules live here as constraints; the services only issue guarded statements.

CREATE TABLE accounts (
  id            text PRIMARY KEY,
  email         text NOT NULL,
  name          text,
  balance_cents bigint NOT NULL DEFAULT 0 CHECK (balance_cents >= 0),
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX accounts_email ON accounts (lower(email));

CREATE TABLE api_keys (
  id                    text PRIMARY KEY,
  account_id            text NOT NULL REFERENCES accounts (id),
  name                  text NOT NULL,
  key_hash              bytea NOT NULL UNIQUE,      -- SHA-256 of the full key; the key itself is never stored
  start                 text NOT NULL,              -- prefix plus 4 characters, for display
  daily_cap_cents       bigint CHECK (daily_cap_cents >= 0),
  rate_limit_per_minute integer NOT NULL CHECK (rate_limit_per_minute > 0),
  created_at            timestamptz NOT NULL DEFAULT now(),
  revoked_at            timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id);

-- One row per key and day: what the key charged that day minus what was returned of it.
CREATE TABLE key_day_usage (
  key_id      text NOT NULL REFERENCES api_keys (id),
  day         date NOT NULL,
  spent_cents bigint NOT NULL CHECK (spent_cents >= 0),
  PRIMARY KEY (key_id, day)
);

CREATE TABLE generations (
  id             text PRIMARY KEY,
  account_id     text NOT NULL REFERENCES accounts (id),
  key_id         text REFERENCES api_keys (id),
  usage_day      date,                                -- the key's day the charge counted against
  model_id       text NOT NULL,
  inputs         json NOT NULL,   -- json, not jsonb: keeps the model's field order as resolved
  status         text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'succeeded', 'failed', 'refunded')),
  cost_cents     bigint NOT NULL CHECK (cost_cents >= 0),
  refunded_cents bigint NOT NULL DEFAULT 0,
  content_key    text,
  content_type   text,
  content_bytes  bigint,
  content_etag   text,
  text_output    text,
  error_code     text,
  error_message  text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  started_at     timestamptz,
  completed_at   timestamptz,
  deleted_at     timestamptz,
  -- the job: a queued generation is claimed by a worker that holds a lease it renews while rendering
  attempts       integer NOT NULL DEFAULT 0,
  run_after      timestamptz NOT NULL DEFAULT now(),
  lease_owner    text,
  lease_until    timestamptz,
  deadline_at    timestamptz NOT NULL,
  CHECK ((status = 'queued') = (completed_at IS NULL)),
  CHECK (refunded_cents = CASE WHEN status IN ('failed', 'refunded') THEN cost_cents ELSE 0 END),
  -- a succeeded render has its output until it is deleted (the file is removed after the record)
  CHECK (status <> 'succeeded' OR deleted_at IS NOT NULL OR content_key IS NOT NULL OR text_output IS NOT NULL)
);
CREATE INDEX generations_account_list ON generations (account_id, id DESC) WHERE deleted_at IS NULL;
-- fair claiming walks the (account, model) pairs that have queued work, then each pair's oldest job
CREATE INDEX generations_queue ON generations (account_id, model_id, run_after, id) WHERE status = 'queued';
-- renders holding a lease (running), counted per model and per account at each claim
CREATE INDEX generations_leased ON generations (model_id, account_id) WHERE status = 'queued' AND lease_until IS NOT NULL;
CREATE INDEX generations_deadline ON generations (deadline_at) WHERE status = 'queued';
CREATE INDEX generations_purge ON generations (id) WHERE content_key IS NOT NULL AND (deleted_at IS NOT NULL OR status = 'refunded');

CREATE TABLE ledger_entries (
  id            text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts (id),
  kind          text NOT NULL CHECK (kind IN ('credit', 'charge', 'refund')),
  amount_cents  bigint NOT NULL CHECK (amount_cents > 0),
  generation_id text,          -- no foreign key: the money history outlives a deleted generation
  reason        text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'credit') = (generation_id IS NULL))
);
-- one charge and at most one refund per generation, whatever runs twice
CREATE UNIQUE INDEX ledger_one_per_generation ON ledger_entries (generation_id, kind) WHERE generation_id IS NOT NULL;
CREATE INDEX ledger_account_list ON ledger_entries (account_id, id DESC);

CREATE TABLE idempotency_keys (
  account_id    text NOT NULL REFERENCES accounts (id),
  key           text NOT NULL,
  request_hash  bytea NOT NULL,
  generation_id text NOT NULL,
  response      json NOT NULL,   -- the 202 body exactly as first sent
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);

-- Fixed-window request counters of rate-limiter-flexible (RateLimiterPostgres' own layout), shared by
-- every process on this database.
CREATE UNLOGGED TABLE rate_limits (   -- counters lost in a crash cost nothing; no WAL per request
  key    varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);
