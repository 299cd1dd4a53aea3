-- A key's lookup (src/db/api-keys.ts keyByHash) counts its account's live keys and reads the highest
-- rate limit among them, the limit those keys share (src/services/rate-limits.ts consumeKey). Revoked
-- keys are kept, as many as an owner ever made: this index holds the live ones alone, with their
-- limits, so the lookup reads at most the account's live keys (RENDERGATE_KEYS_PER_ACCOUNT) from it.
CREATE INDEX api_keys_live_by_account ON api_keys (account_id, rate_limit_per_minute)
  WHERE revoked_at IS NULL;
