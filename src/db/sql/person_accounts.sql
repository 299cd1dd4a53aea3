-- rendergate_person_accounts and its trigger: people.account_count is the number of accounts the
-- person is a member of (migrations/038), so the session's statement knows from the person's row,
-- which it reads anyway, whether the account switcher has a list to show. This file is the
-- function's one current body and its trigger's definition (src/db/sql-functions.ts).
--
-- Exact under concurrency: each change adds or takes one on the person's row, and an UPDATE that
-- waited for another's row lock adds to the value that one committed.
-- applied with: 038_membership_counts.sql
CREATE OR REPLACE FUNCTION rendergate_person_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE people SET account_count = account_count - 1 WHERE id = OLD.person_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE people SET account_count = account_count + 1 WHERE id = NEW.person_id;
  END IF;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER memberships_person_accounts
  AFTER INSERT OR DELETE OR UPDATE OF person_id ON memberships
  FOR EACH ROW EXECUTE FUNCTION rendergate_person_accounts();
