-- Cluster-wide paces of admission (src/admission/shared-pace.ts): an account's upload turns and its
-- budget of request bodies, one schedule per (pace, account) shared by every API process. A process
-- books a request on it, and leases a little of the capacity free now to spend in memory, with one
-- guarded statement (src/db/admission-paces.ts); the row is the whole state.
CREATE UNLOGGED TABLE admission_paces (   -- lost in a crash, every account starts with its burst again
  pace      text             NOT NULL,    -- 'uploads' | 'bodies'
  subject   text             NOT NULL,    -- the account
  clear_at  double precision NOT NULL,    -- ms since the Unix epoch when what was booked is paid for
  full_at   double precision NOT NULL,    -- clear_at + the burst: from then the row is as if absent
  start_at  double precision NOT NULL,    -- the last booking's start on the schedule (its turn)
  leased    double precision NOT NULL CHECK (leased >= 0),  -- ms leased by the last booking
  admitted  boolean          NOT NULL,    -- whether the last booking was let in
  PRIMARY KEY (pace, subject)
);
CREATE INDEX admission_paces_full_at ON admission_paces (full_at);
