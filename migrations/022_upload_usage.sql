-- Each account's uploads not yet marked deleted, counted as they come and go (src/db/uploads.ts), so the
-- upload quota is one guarded write rather than a sum over the account's rows at every upload (two sums
-- an upload before, over up to RENDERGATE_UPLOAD_QUOTA_COUNT rows each). It always equals the sum over
-- the account's rows with deleted_at null: the statement that writes a row, marks it deleted or
-- removes an unmarked one changes it in the same statement. Uploads past their expiry stay counted until
-- they are marked or removed: by the janitor, or at once for an account an upload finds at its quota.
CREATE TABLE upload_usage (
  account_id text PRIMARY KEY REFERENCES accounts (id),
  bytes      bigint NOT NULL CHECK (bytes >= 0),
  uploads    integer NOT NULL CHECK (uploads >= 0)
);
INSERT INTO upload_usage (account_id, bytes, uploads)
  SELECT account_id, sum(size_bytes), count(*) FROM uploads WHERE deleted_at IS NULL GROUP BY account_id;
