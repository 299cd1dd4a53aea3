-- Issue 38: the audit log (docs/api.md "Audit log"). One row per event, written in the same
-- transaction as the change it records (src/audit/record.ts). Each account's events form one hash
-- chain: `seq` numbers them 1, 2, … in the order they were appended (under an advisory lock per
-- account), `prev_hash` is the previous event's `hash` (64 zeros for the first), and `hash` covers
-- the previous hash and the event's canonical JSON, so `rendergate audit verify` finds a changed,
-- removed or reordered event. The unique (account_id, seq) makes a fork of the chain impossible
-- even if a writer skipped the lock.
CREATE TABLE audit_events (
  id         text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  seq        bigint NOT NULL CHECK (seq > 0),
  at         timestamptz NOT NULL,
  action     text NOT NULL,
  actor      jsonb NOT NULL,
  target     jsonb,
  ip         text,
  user_agent text,
  details    jsonb NOT NULL DEFAULT '{}',
  prev_hash  text NOT NULL CHECK (prev_hash ~ '^[0-9a-f]{64}$'),
  hash       text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
  UNIQUE (account_id, seq)
);

-- The studio's filter by action, newest first, within an account.
CREATE INDEX audit_events_action ON audit_events (account_id, action, seq DESC);
-- The filter by member (the actor's id).
CREATE INDEX audit_events_actor ON audit_events (account_id, (actor ->> 'id'), seq DESC);
