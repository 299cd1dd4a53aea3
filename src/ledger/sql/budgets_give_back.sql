-- rendergate_budgets_give_back: the budget counts a charge took on its fast path
-- (sql/create_generations.sql) given back, when that path could not count them all or when the
-- key's day cap or the balance refuses the charge after it. The arrays name the rows counted
-- (scope, subject, period, period start); the fast path changes only their spend. Called under
-- the account's lock, in the charge's transaction.
-- This file is the function's one current body (src/db/sql-functions.ts).
CREATE OR REPLACE FUNCTION rendergate_budgets_give_back(p_account text, p_cost bigint,
  p_scope text[], p_subject text[], p_period text[], p_start date[])
RETURNS void LANGUAGE sql AS $$
  UPDATE budget_usage AS u SET spent_cents = u.spent_cents - p_cost
    FROM unnest(p_scope, p_subject, p_period, p_start) AS x(scope, subject_id, period, start)
   WHERE u.account_id = p_account AND u.scope = x.scope AND u.subject_id = x.subject_id
     AND u.period = x.period AND u.period_start = x.start
$$;
