-- rendergate_queue_ahead: how many renders of model p_model wait to start (queued, not started)
-- besides the p_mine this transaction has just created, counted up to p_cap. This file is the
-- function's one current body (src/db/sql-functions.ts).
--
-- The create's statement (src/ledger/create-statements.ts) calls it once per model of a batch,
-- after the batch's charge. PL/pgSQL and VOLATILE so that its count runs in a snapshot of its own,
-- taken then, not in the statement's, taken before the charge waited for its accounts' locks: a
-- batch that waited for another batch of the same account counts that batch's renders, so two
-- creates of one account never answer the same place. It sees this transaction's own renders too,
-- which is why they are given and left out. Each render the count passes is read from the table
-- (rows this young are never all-visible), hence one count per model, not per render.
CREATE OR REPLACE FUNCTION rendergate_queue_ahead(p_model text, p_mine integer, p_cap integer)
RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN greatest((SELECT count(*)::int FROM (SELECT 1 FROM generations w
    WHERE w.model_id = p_model AND w.status = 'queued' AND w.started_at IS NULL
    LIMIT p_cap + p_mine) a) - p_mine, 0);
END $$;
