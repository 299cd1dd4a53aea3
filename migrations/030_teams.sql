-- Teams (docs/api.md "Teams: members and roles"): people apart from accounts. A person (email,
-- password) is a member of one or more accounts with one role each; sessions belong to a person and
-- name the account in use; invites are one-time links to join an account with a role.
--
-- Rolling upgrade: only additions. accounts.email and studio_passwords stay, read and written by
-- the previous release; triggers keep what it writes meaningful to this one: a new account gets its
-- email's person as owner, a password it sets reaches that person, a session it opens names it.

CREATE TABLE people (
  id                  text PRIMARY KEY,
  email               text NOT NULL,
  password_hash       text,
  password_updated_at timestamptz,
  last_account_id     text REFERENCES accounts (id),   -- opens at sign-in
  created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX people_email ON people (lower(email));

CREATE TABLE memberships (
  account_id text NOT NULL REFERENCES accounts (id),
  person_id  text NOT NULL REFERENCES people (id),
  role       text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'billing', 'viewer')),
  joined_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, person_id)
);
CREATE INDEX memberships_person ON memberships (person_id);

-- An invitation to join an account with a role, stored as the SHA-256 of its link's secret. A new
-- invite to the same email voids the pending one (at most one pending per account and email).
CREATE TABLE member_invites (
  token_hash bytea PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  email      text NOT NULL,
  role       text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'billing', 'viewer')),
  invited_by text REFERENCES people (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  voided_at  timestamptz
);
CREATE UNIQUE INDEX member_invites_pending ON member_invites (account_id, lower(email))
  WHERE used_at IS NULL AND voided_at IS NULL;

ALTER TABLE studio_sessions ADD COLUMN person_id text REFERENCES people (id);
CREATE INDEX studio_sessions_person ON studio_sessions (person_id) WHERE revoked_at IS NULL;
-- A one-time link (invite to set a first password, reset) is for a person.
ALTER TABLE studio_tokens ADD COLUMN person_id text REFERENCES people (id);
-- Who made a key (null: the operator) and who started a studio render (null: a key did).
ALTER TABLE api_keys ADD COLUMN created_by text REFERENCES people (id);
ALTER TABLE generations ADD COLUMN started_by text REFERENCES people (id);

-- Every account: its email's person (the person's id is the account's, prefix `usr`), as owner.
CREATE FUNCTION rendergate_owner_of_new_account() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER accounts_owner AFTER INSERT ON accounts
  FOR EACH ROW EXECUTE FUNCTION rendergate_owner_of_new_account();

-- A password the previous release sets (by account) is its owner's, the account's first person.
CREATE FUNCTION rendergate_password_to_person() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE people SET password_hash = NEW.password_hash, password_updated_at = NEW.updated_at
   WHERE id = 'usr_' || substr(NEW.account_id, 6);
  RETURN NEW;
END $$;
CREATE TRIGGER studio_passwords_person AFTER INSERT OR UPDATE ON studio_passwords
  FOR EACH ROW EXECUTE FUNCTION rendergate_password_to_person();

-- A session or link the previous release opens names an account only: it is the owner's.
CREATE FUNCTION rendergate_person_of_account_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.person_id IS NULL AND NEW.account_id IS NOT NULL THEN
    SELECT m.person_id INTO NEW.person_id FROM memberships m
     WHERE m.account_id = NEW.account_id AND m.role = 'owner' ORDER BY m.joined_at LIMIT 1;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER studio_sessions_person BEFORE INSERT ON studio_sessions
  FOR EACH ROW EXECUTE FUNCTION rendergate_person_of_account_row();
CREATE TRIGGER studio_tokens_person BEFORE INSERT ON studio_tokens
  FOR EACH ROW EXECUTE FUNCTION rendergate_person_of_account_row();

-- Backfill: every existing account becomes an account owned by its person, sessions and links
-- included; nothing else changes for them or their keys.
INSERT INTO people (id, email, password_hash, password_updated_at, last_account_id, created_at)
SELECT 'usr_' || substr(a.id, 6), a.email, p.password_hash, p.updated_at, a.id, a.created_at
  FROM accounts a LEFT JOIN studio_passwords p ON p.account_id = a.id
ON CONFLICT DO NOTHING;
INSERT INTO memberships (account_id, person_id, role, joined_at)
SELECT a.id, 'usr_' || substr(a.id, 6), 'owner', a.created_at FROM accounts a
ON CONFLICT DO NOTHING;
UPDATE studio_sessions SET person_id = 'usr_' || substr(account_id, 6)
 WHERE account_id IS NOT NULL AND person_id IS NULL;
UPDATE studio_tokens SET person_id = 'usr_' || substr(account_id, 6) WHERE person_id IS NULL;
