// The statement of GET /v1/usage: renders of one account and mode created within a range of days,
// counted and summed per group. It reads the generations alone (deleted ones included: their money
// was spent), through generations_usage (migrations/029), an index that holds every column it needs.
import type { Queryable } from './pool.ts';

/** What a row may be grouped by; `studio` is whether a render was started in the studio (no key). */
export type UsageColumn = 'day' | 'model' | 'key' | 'studio';

// $5 is the day's time zone. Fixed text only: the grouping never puts a client's string into SQL.
const EXPR: Record<UsageColumn, { sql: string; order: string }> = {
  day: { sql: '(g.created_at AT TIME ZONE $5)::date', order: 'ASC' },
  model: { sql: 'g.model_id', order: 'ASC' },
  key: { sql: 'g.key_id', order: 'ASC NULLS LAST' },
  studio: { sql: '(g.key_id IS NULL)', order: 'DESC' },
};

export interface UsageRow {
  day?: string;
  model?: string;
  key?: string | null;
  studio?: boolean;
  renders: number;
  spent: number;
}

/** The statement for a grouping: $1 account, $2 mode, $3 and $4 first and last day, $5 time zone. */
export function usageStatement(columns: UsageColumn[]): string {
  const cols = columns.map((c) => `${EXPR[c].sql} AS ${c}`);
  const agg =
    'count(*)::int AS renders, coalesce(sum(g.cost_cents - g.refunded_cents), 0)::bigint AS spent';
  const at = (c: UsageColumn, i: number) => `${i + 1} ${EXPR[c].order}`;
  return `SELECT ${[...cols, agg].join(', ')}
     FROM generations g
    WHERE g.account_id = $1 AND g.mode = $2
      AND g.created_at >= ($3::date::timestamp AT TIME ZONE $5)
      AND g.created_at < (($4::date + 1)::timestamp AT TIME ZONE $5)${
        columns.length === 0
          ? ''
          : `
    GROUP BY ${columns.map((_, i) => i + 1).join(', ')}
    ORDER BY ${columns.map(at).join(', ')}`
      }`;
}

/**
 * Renders created from the start of `from` to the end of `to` (dates in `timeZone`), grouped by
 * `columns` in that order; without columns, one row of totals (zero when there were none).
 * `spent` is what was charged less what was returned (a test key's renders: their prices).
 */
export async function usageRows(
  q: Queryable,
  p: {
    accountId: string;
    mode: 'live' | 'test';
    from: string;
    to: string;
    timeZone: string;
    columns: UsageColumn[];
  },
): Promise<UsageRow[]> {
  const { rows } = await q.query<UsageRow>({
    // one prepared statement per grouping and order (65 at most)
    name: `usage-${p.columns.join('-') || 'total'}`,
    text: usageStatement(p.columns),
    values: [p.accountId, p.mode, p.from, p.to, p.timeZone],
  });
  return rows;
}

export interface DailyModelRow {
  model: string;
  /** Days with renders of the model, as days after `from` (0 is `from`), ascending. */
  days: number[];
  /** What the model's renders created on each of those days spent. */
  spent: number[];
}

/**
 * Spend per model and day from `from` to `to` (dates in `timeZone`), one row per model with an array
 * per day: the Usage chart's year of 20 models is 20 rows to parse, not 7,320.
 */
export async function dailySpendByModel(
  q: Queryable,
  p: { accountId: string; mode: 'live' | 'test'; from: string; to: string; timeZone: string },
): Promise<DailyModelRow[]> {
  const { rows } = await q.query<DailyModelRow>({
    name: 'usage-daily-by-model',
    text: `SELECT model, array_agg(d ORDER BY d) AS days, array_agg(s ORDER BY d) AS spent
      FROM (SELECT g.model_id AS model, (g.created_at AT TIME ZONE $5)::date - $3::date AS d,
                   sum(g.cost_cents - g.refunded_cents)::float8 AS s
              FROM generations g
             WHERE g.account_id = $1 AND g.mode = $2
               AND g.created_at >= ($3::date::timestamp AT TIME ZONE $5)
               AND g.created_at < (($4::date + 1)::timestamp AT TIME ZONE $5)
             GROUP BY 1, 2) x
     GROUP BY model ORDER BY model`,
    values: [p.accountId, p.mode, p.from, p.to, p.timeZone],
  });
  return rows;
}

/**
 * What an account's spend figures depend on, in three index probes: its newest ledger entry (every
 * charge and refund writes one), its newest render (free renders count too) and its keys' names
 * (the per-key figures are labelled with them). The same stamp: the same figures.
 */
export async function spendStamp(q: Queryable, accountId: string): Promise<string> {
  const { rows } = await q.query<{ stamp: string }>({
    name: 'usage-spend-stamp',
    text: `SELECT ${SPEND_STAMP_SQL} AS stamp`,
    values: [accountId],
  });
  return rows[0].stamp;
}

/** The stamp of spendStamp as an expression of the account ($1), for a statement that reads more. */
export const SPEND_STAMP_SQL = `concat_ws('|',
    (SELECT max(id) FROM ledger_entries WHERE account_id = $1),
    (SELECT max(id) FROM generations WHERE account_id = $1 AND deleted_at IS NULL),
    (SELECT md5(string_agg(id || ':' || coalesce(name, ''), ',' ORDER BY id))
       FROM api_keys WHERE account_id = $1))`;
