-- rendergate_budget_start: the first day of the budget period holding `day` (a day in
-- RENDERGATE_DAY_TIMEZONE): the day itself, its week's Monday, its month's first, or one fixed day
-- for `total`. Budget usage rows are keyed by it (migrations/036); the charge and refunds agree on
-- a render's period through it. This file is the function's one current body
-- (src/db/sql-functions.ts).
CREATE OR REPLACE FUNCTION rendergate_budget_start(p_period text, p_day date)
RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE p_period
    WHEN 'day' THEN p_day
    WHEN 'week' THEN date_trunc('week', p_day::timestamp)::date
    WHEN 'month' THEN date_trunc('month', p_day::timestamp)::date
    ELSE date '1970-01-01'
  END
$$;
