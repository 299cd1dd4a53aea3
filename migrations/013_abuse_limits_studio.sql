-- Abuse limits of the studio and of uploads (docs/account-limits.md).

-- Attempts counted per scope ('signin-pair:<email>|<ip>', 'signin-email:<email>', 'signup-ip:<ip>',
-- 'console-ip:<ip>', …) and per window. Unlike studio_signin_failures (which the previous release keeps
-- using while both run), an attempt is counted BEFORE it is checked, by one guarded statement per scope
-- that refuses to count past the limit: parallel attempts count one each. window_start is the window's
-- start in Unix seconds, so scopes of different window lengths share the table and one cleanup.
CREATE UNLOGGED TABLE studio_attempts (
  scope        text   NOT NULL,
  window_start bigint NOT NULL,
  attempts     integer NOT NULL CHECK (attempts >= 0),
  PRIMARY KEY (scope, window_start)
);
CREATE INDEX studio_attempts_window ON studio_attempts (window_start);

-- A console session belongs to the admin token it was opened with (a hash of it): once the token
-- changes, no earlier console session opens /admin.
ALTER TABLE studio_sessions ADD COLUMN admin_token_hash bytea;

-- The account's live uploads, for the quota (sum and count under a per-account lock) and the list
-- (newest first, keyset on id).
CREATE INDEX uploads_account_live ON uploads (account_id, id) WHERE deleted_at IS NULL;


-- The janitor removes sessions and links that ended a day ago.
CREATE INDEX studio_sessions_expiry ON studio_sessions (expires_at);
CREATE INDEX studio_tokens_expiry ON studio_tokens (expires_at);
CREATE INDEX studio_tokens_account ON studio_tokens (account_id) WHERE used_at IS NULL;
