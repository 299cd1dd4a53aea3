-- rendergate_render_budgets: the budgets a render counts in, with the first day of the period it
-- counts in (its charge's day, `p_day`): its key's (test renders too), and for a live render the
-- account's and its member's (the studio member who started it, else its key's creator). The one
-- rule of the charge (sql/create_generations.sql) and of refunds (spend.ts), so that a refund
-- takes back from exactly the budgets its charge counted in. A STABLE SQL function of one SELECT:
-- PostgreSQL inlines it into the statement that reads it.
-- This file is the function's one current body (src/db/sql-functions.ts).
CREATE OR REPLACE FUNCTION rendergate_render_budgets(p_account text, p_key text, p_live boolean,
  p_person text, p_day date)
RETURNS TABLE (scope text, subject_id text, period text, limit_cents bigint, start date)
LANGUAGE sql STABLE AS $$
  SELECT b.scope, b.subject_id, b.period, b.limit_cents, rendergate_budget_start(b.period, p_day)
    FROM budgets b
   WHERE b.account_id = p_account
     AND ((b.scope = 'key' AND b.subject_id = p_key)
       OR (p_live AND b.scope = 'account' AND b.subject_id = p_account)
       OR (p_live AND b.scope = 'member' AND b.subject_id = coalesce(p_person,
         (SELECT k.created_by FROM api_keys k WHERE k.id = p_key AND k.account_id = p_account))))
$$;
