// Budgets (docs/billing.md "Budgets"): a limit in cents over a period for the account, one of its
// members or one of its keys. The charge counts and limits them (sql/create_generations.sql) and
// refunds give back (spend.ts); here they are set, removed and read. Setting and removing take the
// account's row lock first, as every charge does, so a budget never changes under a charge that is
// counting in it, and the usage row of a new budget starts from what its subject has already spent
// in the period (every render since charged is then counted in it by the charge itself).
import type { Queryable, Tx } from '../db/pool.ts';

export const PERIODS = ['day', 'week', 'month', 'total'] as const;
export type Period = (typeof PERIODS)[number];
export type BudgetScope = 'account' | 'member' | 'key';

/** Whose budget: the account's (subject: its id), a member's (a person's id) or a key's. */
export interface BudgetSubject {
  accountId: string;
  scope: BudgetScope;
  subjectId: string;
}

export interface BudgetView {
  period: Period;
  limitCents: number;
  spentCents: number;
  /** When the period ends (null: `total` never does). */
  resetsAt: string | null;
}

// The day in the budgets' zone, the period's first day and the next period's.
const BOUNDS = `(SELECT s.start,
    CASE $4::text WHEN 'day' THEN s.start + 1 WHEN 'week' THEN s.start + 7
      WHEN 'month' THEN (s.start + interval '1 month')::date END AS next
  FROM (SELECT rendergate_budget_start($4, (now() AT TIME ZONE $5)::date) AS start) s)`;

// What the subject spent in the period so far (charges less refunds), by the charge's rule: a
// key's budget counts its renders, test ones too; the account's and a member's count live ones, a
// member's those they started in the studio and those of the keys they created.
const START_USAGE = `
INSERT INTO budget_usage (account_id, scope, subject_id, period, period_start, spent_cents)
SELECT $1, $2, $3, $4, p.start, coalesce((
  SELECT sum(g.cost_cents - g.refunded_cents) FROM generations g
    LEFT JOIN api_keys k ON k.id = g.key_id
  WHERE g.account_id = $1 AND g.usage_day >= p.start AND (p.next IS NULL OR g.usage_day < p.next)
    AND CASE $2::text WHEN 'key' THEN g.key_id = $3
      WHEN 'account' THEN g.mode = 'live'
      ELSE g.mode = 'live' AND coalesce(g.started_by, k.created_by) = $3 END), 0)
FROM ${BOUNDS} p
ON CONFLICT (account_id, scope, subject_id, period, period_start)
  DO UPDATE SET spent_cents = EXCLUDED.spent_cents`;

/**
 * Sets the subject's budget of `period` to `limitCents` inside `tx`: the limit it replaces, or null
 * when there was none. False when the account does not exist.
 */
export async function setBudgetIn(
  tx: Tx,
  s: BudgetSubject,
  period: Period,
  limitCents: number,
  timeZone: string,
): Promise<{ previous: number | null } | false> {
  const acct = await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [s.accountId]);
  if (acct.rowCount === 0) return false;
  const key = [s.accountId, s.scope, s.subjectId, period];
  const { rows } = await tx.query<{ limit_cents: string }>(
    `SELECT limit_cents FROM budgets
     WHERE account_id = $1 AND scope = $2 AND subject_id = $3 AND period = $4`,
    key,
  );
  if (rows[0]) {
    await tx.query(
      `UPDATE budgets SET limit_cents = $5, updated_at = now()
       WHERE account_id = $1 AND scope = $2 AND subject_id = $3 AND period = $4`,
      [...key, limitCents],
    );
    return { previous: Number(rows[0].limit_cents) };
  }
  await tx.query(
    `INSERT INTO budgets (account_id, scope, subject_id, period, limit_cents)
     VALUES ($1, $2, $3, $4, $5)`,
    [...key, limitCents],
  );
  await tx.query(START_USAGE, [...key, timeZone]);
  return { previous: null };
}

/** Removes the subject's budget of `period` (its usage goes with it): the limit it had, or null. */
export async function removeBudgetIn(
  tx: Tx,
  s: BudgetSubject,
  period: Period,
): Promise<number | null> {
  await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [s.accountId]);
  const { rows } = await tx.query<{ limit_cents: string }>(
    `DELETE FROM budgets WHERE account_id = $1 AND scope = $2 AND subject_id = $3 AND period = $4
     RETURNING limit_cents`,
    [s.accountId, s.scope, s.subjectId, period],
  );
  return rows[0] ? Number(rows[0].limit_cents) : null;
}

/** A budget of the account's, with whose it is. */
export interface AccountBudget extends BudgetView {
  scope: BudgetScope;
  subjectId: string;
}

/** The subject's budgets in period order, each with its spend in its current period. */
export async function budgetsOf(
  q: Queryable,
  s: BudgetSubject,
  timeZone: string,
): Promise<BudgetView[]> {
  return (await budgetRows(q, s.accountId, s, timeZone)).map(
    ({ period, limitCents, spentCents, resetsAt }) => ({
      period,
      limitCents,
      spentCents,
      resetsAt,
    }),
  );
}

/** Every budget of the account (its own, its members', its keys'), by scope and whose. */
export function accountBudgets(
  q: Queryable,
  accountId: string,
  timeZone: string,
): Promise<AccountBudget[]> {
  return budgetRows(q, accountId, null, timeZone);
}

/**
 * The account's budgets ($1) with their current period's spend, in the budgets' zone ($2); of one
 * subject when `subject` ($2 and $3 its scope and id, the zone $4). Two texts rather than one with
 * "$2 IS NULL OR …": PostgreSQL plans that form again at every call (a generic plan cannot drop the
 * OR), a tenth of a millisecond each time.
 */
function budgetRowsSql(subject: boolean): string {
  const tz = subject ? '$4' : '$2';
  return `SELECT b.scope, b.subject_id, b.period, b.limit_cents,
        coalesce(u.spent_cents, 0) AS spent_cents,
        (CASE b.period WHEN 'day' THEN p.start + 1 WHEN 'week' THEN p.start + 7
          WHEN 'month' THEN (p.start + interval '1 month')::date END)::timestamp
          AT TIME ZONE ${tz} AS resets_at
      FROM budgets b
      CROSS JOIN LATERAL (SELECT rendergate_budget_start(b.period,
        (now() AT TIME ZONE ${tz})::date) AS start) p
      LEFT JOIN budget_usage u ON u.account_id = b.account_id AND u.scope = b.scope
        AND u.subject_id = b.subject_id AND u.period = b.period AND u.period_start = p.start
      WHERE b.account_id = $1${subject ? ' AND b.scope = $2 AND b.subject_id = $3' : ''}
      ORDER BY array_position(ARRAY['account', 'member', 'key'], b.scope), b.subject_id,
        array_position(ARRAY['day', 'week', 'month', 'total'], b.period)`;
}
const BUDGET_ROWS = budgetRowsSql(false);
const BUDGET_ROWS_OF_SUBJECT = budgetRowsSql(true);

async function budgetRows(
  q: Queryable,
  accountId: string,
  s: BudgetSubject | null,
  timeZone: string,
): Promise<AccountBudget[]> {
  const { rows } = await q.query<{
    scope: BudgetScope;
    subject_id: string;
    period: Period;
    limit_cents: string;
    spent_cents: string;
    resets_at: Date | null;
  }>(
    s
      ? {
          name: 'budgets-of-subject',
          text: BUDGET_ROWS_OF_SUBJECT,
          values: [accountId, s.scope, s.subjectId, timeZone],
        }
      : { name: 'budgets-of', text: BUDGET_ROWS, values: [accountId, timeZone] },
  );
  return rows.map((r) => ({
    scope: r.scope,
    subjectId: r.subject_id,
    period: r.period,
    limitCents: Number(r.limit_cents),
    spentCents: Number(r.spent_cents),
    resetsAt: r.resets_at ? r.resets_at.toISOString() : null,
  }));
}

/** What the Usage page's budgets panel shows, read in one statement (budgetsPanel). */
export interface BudgetsPanel {
  budgets: AccountBudget[];
  /** The account's keys not revoked, newest first. */
  keys: { id: string; name: string | null; start: string; createdBy: string | null }[];
  /** The account's members, the earliest joined first. */
  members: { personId: string; email: string }[];
  lowBalanceCents: number | null;
}

/**
 * The budgets panel of the Usage page: the account's budgets as accountBudgets reads them, the
 * subjects a budget can be set for (live keys, members) and the low-balance alert, in one round
 * trip instead of six (a page's statements are most of its cost: docs/performance.md).
 */
export async function budgetsPanelOf(
  q: Queryable,
  accountId: string,
  timeZone: string,
): Promise<BudgetsPanel | null> {
  const { rows } = await q.query<{ panel: PanelJson | null }>({
    name: 'budgets-panel',
    text: `SELECT ${BUDGETS_PANEL_JSON_SQL} AS panel`,
    values: [accountId, timeZone],
  });
  return budgetsPanelOfJson(rows[0].panel);
}

/**
 * The panel of the account ($1) in the budgets' zone ($2) as JSON (null: no such account), for a
 * statement that reads more; budgetsPanelOfJson makes it a BudgetsPanel.
 */
export const BUDGETS_PANEL_JSON_SQL = `(SELECT json_build_object(
    'budgets', (SELECT coalesce(json_agg(b), '[]') FROM (${BUDGET_ROWS}) b),
    'keys', (SELECT coalesce(json_agg(json_build_object('id', k.id, 'name', k.name,
        'start', k.start, 'createdBy', k.created_by) ORDER BY k.id DESC), '[]')
      FROM api_keys k WHERE k.account_id = $1 AND k.revoked_at IS NULL),
    'members', (SELECT coalesce(json_agg(json_build_object('personId', m.person_id,
        'email', p.email) ORDER BY m.joined_at, p.email), '[]')
      FROM memberships m JOIN people p ON p.id = m.person_id WHERE m.account_id = $1),
    'lowBalanceCents', a.low_balance_cents)
  FROM accounts a WHERE a.id = $1)`;

/** The JSON of BUDGETS_PANEL_JSON_SQL. */
export type PanelJson = Omit<BudgetsPanel, 'budgets'> & { budgets: RowJson[] };

/** The panel of BUDGETS_PANEL_JSON_SQL's JSON; null when the account is not there. */
export function budgetsPanelOfJson(panel: PanelJson | null): BudgetsPanel | null {
  if (panel === null) return null;
  return {
    ...panel,
    // the JSON of a timestamptz is not toISOString()'s: made the same as budgetRows'
    budgets: panel.budgets.map((r) => ({
      scope: r.scope,
      subjectId: r.subject_id,
      period: r.period,
      limitCents: Number(r.limit_cents),
      spentCents: Number(r.spent_cents),
      resetsAt: r.resets_at ? new Date(r.resets_at).toISOString() : null,
    })),
  };
}

interface RowJson {
  scope: BudgetScope;
  subject_id: string;
  period: Period;
  limit_cents: number;
  spent_cents: number;
  resets_at: string | null;
}
