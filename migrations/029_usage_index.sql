-- GET /v1/usage (src/db/usage.ts) sums an account's renders of one mode created within a range of
-- days. No index led there: generations_account_list leaves deleted renders out (their money was spent
-- and counts), so the statement read the whole table. This one holds every column the statement reads,
-- so a year of a busy account is one range of one index, read without visiting the table.
CREATE INDEX generations_usage ON generations (account_id, mode, created_at)
  INCLUDE (model_id, key_id, cost_cents, refunded_cents);
