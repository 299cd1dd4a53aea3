-- The studio's signed-in pages read the session with the person and their membership in the
-- account in use (db/studio-sessions.ts LIVE_SESSION); whether to list the person's other accounts
-- for the switcher was a second probe of memberships on every request. The person's row, read
-- anyway for their email, now carries how many accounts they are in, kept by a trigger in the
-- membership's own transaction (src/db/sql/person_accounts.sql, applied with this migration so that
-- no membership the previous release writes meanwhile escapes it): the common one-account person
-- costs no further read.
--
-- Both tables are locked before the count (people by the ALTER, memberships against writers), so
-- the count is exact: no membership commits between it and the trigger's creation. A membership
-- writer caught between the two locks is a deadlock PostgreSQL breaks; the migrator retries.
ALTER TABLE people ADD COLUMN account_count integer NOT NULL DEFAULT 0
  CHECK (account_count >= 0);
LOCK TABLE memberships IN SHARE ROW EXCLUSIVE MODE;
UPDATE people p SET account_count = c.n
  FROM (SELECT person_id, count(*)::int AS n FROM memberships GROUP BY person_id) c
 WHERE c.person_id = p.id;
