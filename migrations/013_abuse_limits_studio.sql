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

-- One attempt counted in every scope, or in none, in one statement (one round trip, so a burst of
-- parallel attempts holds each connection briefly): every scope's row of the current window is
-- locked in the order given, the current and previous windows summed, and only if all have room is
-- each incremented. Answers 0 when counted, else the 1-based index of the first full scope and that
-- scope's count in the current window.
CREATE FUNCTION rendergate_take_attempt(p_scopes text[], p_max integer[], p_window bigint[], p_now bigint)
RETURNS TABLE (refused integer, current_attempts integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  i integer;
  w bigint;
  cur integer;
  prev integer;
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_scopes, 1), 0) LOOP
    w := (p_now / p_window[i]) * p_window[i];
    INSERT INTO studio_attempts (scope, window_start, attempts) VALUES (p_scopes[i], w, 0)
      ON CONFLICT (scope, window_start) DO NOTHING;
    SELECT a.attempts INTO cur FROM studio_attempts a
      WHERE a.scope = p_scopes[i] AND a.window_start = w FOR UPDATE;
    SELECT coalesce(sum(a.attempts), 0) INTO prev FROM studio_attempts a
      WHERE a.scope = p_scopes[i] AND a.window_start = w - p_window[i];
    IF cur + prev >= p_max[i] THEN
      refused := i;
      current_attempts := cur;
      RETURN NEXT;
      RETURN;
    END IF;
  END LOOP;
  FOR i IN 1 .. coalesce(array_length(p_scopes, 1), 0) LOOP
    w := (p_now / p_window[i]) * p_window[i];
    UPDATE studio_attempts a SET attempts = a.attempts + 1 WHERE a.scope = p_scopes[i] AND a.window_start = w;
  END LOOP;
  refused := 0;
  current_attempts := NULL;
  RETURN NEXT;
END $$;
