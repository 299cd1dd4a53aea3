-- Sign-in a company trusts (docs/studio.md "Signing in"): a TOTP second factor per person with
-- single-use recovery codes, an account's requirement of it, the pending steps of a sign-in (the
-- code after a right password; an OpenID Connect request until its callback) and the one-time
-- sign-in link mailed past the per-email ceiling.
--
-- Rolling upgrade: only additions (and a wider CHECK). The previous release reads none of these
-- columns, never inserts a 'signin' link, and signs in with a password alone.

-- The person's TOTP secret (base32, RFC 6238), set when they confirm a first code; the secret shown
-- while they turn it on waits in totp_pending_secret. totp_last_step is the 30 s step of the last
-- code accepted: a code of that step or an earlier one is refused, so each code works once, even
-- across processes (the guarded UPDATE in db/second-factor.ts).
ALTER TABLE people ADD COLUMN totp_secret text;
ALTER TABLE people ADD COLUMN totp_pending_secret text;
ALTER TABLE people ADD COLUMN totp_enabled_at timestamptz;
ALTER TABLE people ADD COLUMN totp_last_step bigint;
ALTER TABLE people ADD CONSTRAINT people_totp_whole
  CHECK ((totp_enabled_at IS NULL) = (totp_secret IS NULL));

-- Ten per person, shown once: only their SHA-256 is kept; used_at is set by the statement that
-- accepts one, so each works once.
CREATE TABLE recovery_codes (
  person_id text NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  code_hash bytea NOT NULL,
  used_at   timestamptz,
  PRIMARY KEY (person_id, code_hash)
);

-- An owner's "Require two-factor": members without it are sent to turn it on first.
ALTER TABLE accounts ADD COLUMN two_factor_required boolean NOT NULL DEFAULT false;

-- A right password waiting for its code: the cookie holds 32 random bytes, the row their SHA-256.
-- Used once (used_at in the statement that accepts the code), within a few minutes.
CREATE TABLE sign_in_challenges (
  id_hash    bytea PRIMARY KEY,
  person_id  text NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  via        text NOT NULL,
  next_path  text NOT NULL DEFAULT '/',
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);

-- An OpenID Connect sign-in under way: keyed by the SHA-256 of its `state`, bound to the browser
-- that started it (the SHA-256 of a cookie's secret), with the nonce and PKCE verifier the callback
-- checks. The callback uses it once (used_at), so a replayed callback is refused.
CREATE TABLE oidc_requests (
  state_hash    bytea PRIMARY KEY,
  browser_hash  bytea NOT NULL,
  nonce         text NOT NULL,
  code_verifier text NOT NULL,
  next_path     text NOT NULL DEFAULT '/',
  expires_at    timestamptz NOT NULL,
  used_at       timestamptz
);

-- The one-time sign-in link mailed to a person past the per-email ceiling of wrong passwords.
ALTER TABLE studio_tokens DROP CONSTRAINT studio_tokens_purpose_check;
ALTER TABLE studio_tokens ADD CONSTRAINT studio_tokens_purpose_check
  CHECK (purpose IN ('invite', 'reset', 'signin'));
