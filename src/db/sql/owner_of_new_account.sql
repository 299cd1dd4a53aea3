-- rendergate_owner_of_new_account and its trigger: a rolling upgrade's bridge to teams
-- (migrations/030). An account the previous release creates (by email, without people) gets its
-- email's person, made if need be, as owner. This file is the function's one current body and its
-- trigger's definition (src/db/sql-functions.ts); migration 030 holds the first copy, as it ran.
-- applied with: 030_teams.sql
CREATE OR REPLACE FUNCTION rendergate_owner_of_new_account() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  pid text;
BEGIN
  SELECT id INTO pid FROM people WHERE lower(email) = lower(NEW.email);
  IF NOT FOUND THEN
    pid := 'usr_' || substr(NEW.id, 6);
    INSERT INTO people (id, email, password_hash, password_updated_at, last_account_id)
    SELECT pid, NEW.email, p.password_hash, p.updated_at, NEW.id
      FROM (SELECT 1) one LEFT JOIN studio_passwords p ON p.account_id = NEW.id;
  END IF;
  INSERT INTO memberships (account_id, person_id, role) VALUES (NEW.id, pid, 'owner')
    ON CONFLICT DO NOTHING;
  RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER accounts_owner AFTER INSERT ON accounts
  FOR EACH ROW EXECUTE FUNCTION rendergate_owner_of_new_account();
