-- rendergate_number_receipt: every credit and every reversal of a payment gets its receipt's
-- number in the transaction that writes its ledger entry (docs/billing.md "Receipts"). This file
-- is the function's one current body, with its trigger (src/db/sql-functions.ts).
--
-- The counter row of the series and year is taken with an upsert: a second credit anywhere waits
-- for the first's commit, so numbers follow commit order, and a credit rolled back gives its
-- number back with it: no gaps. A trigger rather than a call in the ledger's TypeScript, so a
-- credit the previous release writes during a rolling upgrade is numbered too.
CREATE OR REPLACE FUNCTION rendergate_number_receipt() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s text := CASE NEW.kind WHEN 'credit' THEN 'R' ELSE 'CN' END;
  y int := extract(year FROM NEW.created_at AT TIME ZONE 'UTC')::int;
  n int;
BEGIN
  -- A shortfall made good from a credit is bookkeeping inside that credit, not money sent back.
  IF NEW.kind = 'reversal' AND coalesce(NEW.reason, '') LIKE 'Shortfall made good from %' THEN
    RETURN NULL;
  END IF;
  INSERT INTO receipt_counters AS c (series, year, last) VALUES (s, y, 1)
    ON CONFLICT (series, year) DO UPDATE SET last = c.last + 1
    RETURNING c.last INTO n;
  INSERT INTO receipts (number, series, year, seq, account_id, entry_id, amount_cents, reason,
                        created_at)
  VALUES (s || '-' || y || '-' || lpad(n::text, 6, '0'), s, y, n, NEW.account_id, NEW.id,
          NEW.amount_cents, NEW.reason, NEW.created_at);
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER ledger_entries_receipt AFTER INSERT ON ledger_entries FOR EACH ROW
  WHEN (NEW.kind IN ('credit', 'reversal')) EXECUTE FUNCTION rendergate_number_receipt();
