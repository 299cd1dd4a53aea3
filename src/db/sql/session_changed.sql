-- rendergate_session_changed and its statement triggers: every statement that changes what decides
-- whether a studio session opens anything, and as whom, tells the API processes, which drop the
-- sessions they keep in memory (services/session-cache.ts). This file is the function's one current
-- body and its triggers' definitions (src/db/sql-functions.ts).
--
-- Statement triggers on the columns the session's statement reads (db/studio-sessions.ts
-- LIVE_SESSION), never on a balance: a charge updates accounts.balance_cents only, which fires none
-- of these, since a NOTIFY makes its transaction's commit wait for every other notifying one. These
-- statements are rare (a sign-in, a sign-out, a member invited or removed, an account renamed) and
-- one notification per transaction is sent whatever the rows: PostgreSQL folds equal ones.
CREATE OR REPLACE FUNCTION rendergate_session_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('rendergate_sessions', '');
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER studio_sessions_changed
  AFTER UPDATE OF revoked_at, account_id, expires_at OR DELETE OR TRUNCATE ON studio_sessions
  FOR EACH STATEMENT EXECUTE FUNCTION rendergate_session_changed();
CREATE OR REPLACE TRIGGER memberships_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON memberships
  FOR EACH STATEMENT EXECUTE FUNCTION rendergate_session_changed();
CREATE OR REPLACE TRIGGER people_changed
  AFTER UPDATE OF email, totp_secret, account_count OR DELETE OR TRUNCATE ON people
  FOR EACH STATEMENT EXECUTE FUNCTION rendergate_session_changed();
CREATE OR REPLACE TRIGGER accounts_changed
  AFTER UPDATE OF name, email, two_factor_required OR DELETE OR TRUNCATE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION rendergate_session_changed();
