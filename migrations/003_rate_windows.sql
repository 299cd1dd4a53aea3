-- Per-key request counts per one-minute window (src/services/rate-limits.ts), replacing
-- rate-limiter-flexible's table: processes lease several requests of a window with one guarded
-- statement instead of writing the count on every request.
DROP TABLE rate_limits;

CREATE UNLOGGED TABLE rate_windows (   -- counts lost in a crash cost nothing; no WAL per lease
  key_id       text    NOT NULL,
  window_start bigint  NOT NULL,       -- minutes since the Unix epoch
  used         integer NOT NULL CHECK (used >= 0),
  granted      integer NOT NULL CHECK (granted >= 0),  -- the last lease's size, returned to its taker
  PRIMARY KEY (key_id, window_start)
);
