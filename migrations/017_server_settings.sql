-- Facts a running server records for the operator's command line: the public URL its links use
-- (`rendergate accounts invite` prints the server's own, not one guessed from the shell's variables).
CREATE TABLE server_settings (
  name text PRIMARY KEY,
  value text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
