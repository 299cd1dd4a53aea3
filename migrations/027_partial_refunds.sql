-- Refunds of part of a render's price (src/ledger/refund.ts refundPart): a succeeded render may
-- have part of its price returned, more than once, never more than it cost in all; a failed or
-- refunded render has had all of it returned, a queued one none, as before. refunded_cents is the
-- counter that each refund raises in a guarded statement, with a 'refund' entry of the same amount
-- beside it.
--
-- The rule it replaces (migrations/001: refunded_cents is all or nothing) is stricter, so every row
-- already meets this one: NOT VALID skips the scan of the table (and its lock) while every write
-- from now on is checked. The previous release writes only rows that meet both.
ALTER TABLE generations DROP CONSTRAINT generations_check1;
ALTER TABLE generations ADD CONSTRAINT generations_refunded_within_cost CHECK (
  refunded_cents >= 0 AND refunded_cents <= cost_cents
  AND (status NOT IN ('failed', 'refunded') OR refunded_cents = cost_cents)
  AND (status <> 'queued' OR refunded_cents = 0)) NOT VALID;

-- One charge per generation still; refunds may now be several (their sum is refunded_cents, which
-- its check keeps within the price). The charge's uniqueness is what makes a second charge
-- impossible.
DROP INDEX ledger_one_per_generation;
CREATE UNIQUE INDEX ledger_one_charge_per_generation ON ledger_entries (generation_id)
  WHERE kind = 'charge';
CREATE INDEX ledger_by_generation ON ledger_entries (generation_id, kind)
  WHERE generation_id IS NOT NULL;
