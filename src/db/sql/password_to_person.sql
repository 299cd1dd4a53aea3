-- rendergate_password_to_person and its trigger: a rolling upgrade's bridge to teams
-- (migrations/030). A password the previous release sets (by account) is its owner's, the
-- account's first person. This file is the function's one current body and its trigger's
-- definition (src/db/sql-functions.ts); migration 030 holds the first copy, as it ran.
-- applied with: 030_teams.sql
CREATE OR REPLACE FUNCTION rendergate_password_to_person() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE people SET password_hash = NEW.password_hash, password_updated_at = NEW.updated_at
   WHERE id = 'usr_' || substr(NEW.account_id, 6);
  RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER studio_passwords_person AFTER INSERT OR UPDATE ON studio_passwords
  FOR EACH ROW EXECUTE FUNCTION rendergate_password_to_person();
