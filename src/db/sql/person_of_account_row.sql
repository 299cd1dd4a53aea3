-- rendergate_person_of_account_row and its two triggers: a rolling upgrade's bridge to teams
-- (migrations/030). A session or one-time link the previous release opens names an account only:
-- it is that account's first owner's. This file is the function's one current body and its
-- triggers' definitions (src/db/sql-functions.ts); migration 030 holds the first copy, as it ran.
-- applied with: 030_teams.sql
CREATE OR REPLACE FUNCTION rendergate_person_of_account_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.person_id IS NULL AND NEW.account_id IS NOT NULL THEN
    SELECT m.person_id INTO NEW.person_id FROM memberships m
     WHERE m.account_id = NEW.account_id AND m.role = 'owner' ORDER BY m.joined_at LIMIT 1;
  END IF;
  RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER studio_sessions_person BEFORE INSERT ON studio_sessions
  FOR EACH ROW EXECUTE FUNCTION rendergate_person_of_account_row();
CREATE OR REPLACE TRIGGER studio_tokens_person BEFORE INSERT ON studio_tokens
  FOR EACH ROW EXECUTE FUNCTION rendergate_person_of_account_row();
