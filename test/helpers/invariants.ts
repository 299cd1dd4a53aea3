// The money invariants every scenario ends with (docs/architecture.md "Money"). Each query returns the rows
// that break a rule; all must be empty.
import { expect } from 'vitest';
import type { Queryable } from '../../src/db/pool.ts';

const CHECKS: Record<string, string> = {
  'ledger adds up to the balance': `
    SELECT a.id, a.balance_cents, coalesce(l.sum, 0) AS ledger FROM accounts a
    LEFT JOIN (SELECT account_id, sum(CASE WHEN kind IN ('charge', 'reversal') THEN -amount_cents ELSE amount_cents END) AS sum
               FROM ledger_entries GROUP BY account_id) l ON l.account_id = a.id
    WHERE a.balance_cents <> coalesce(l.sum, 0)`,
  'no negative balance': `SELECT id FROM accounts WHERE balance_cents < 0`,
  // A shortfall is owed only when the balance is spent: a reversal takes what there is first.
  'a shortfall only with an empty balance': `SELECT id FROM accounts WHERE shortfall_cents > 0 AND balance_cents > 0`,
  // Test renders (test keys) never move money.
  'no ledger entry for a test render': `
    SELECT l.id FROM ledger_entries l JOIN generations g ON g.id = l.generation_id WHERE g.mode = 'test'`,
  'a top-up credited once, by one credit entry of its amount': `
    SELECT t.session_id FROM topups t LEFT JOIN ledger_entries l ON l.id = t.credit_entry_id
    WHERE l.id IS NULL OR l.kind <> 'credit' OR l.amount_cents <> t.amount_cents OR l.account_id <> t.account_id
      OR (SELECT count(*) FROM ledger_entries c WHERE c.reason = 'Stripe Checkout ' || t.session_id) <> 1`,
  'one charge per generation, equal to its cost': `
    SELECT g.id FROM generations g
    LEFT JOIN (SELECT generation_id, count(*) AS n, sum(amount_cents) AS amount FROM ledger_entries WHERE kind = 'charge' GROUP BY generation_id) c
      ON c.generation_id = g.id
    WHERE g.cost_cents > 0 AND g.mode = 'live' AND (c.n IS DISTINCT FROM 1 OR c.amount <> g.cost_cents)`,
  // Refunds of part (src/ledger/refund.ts) only while succeeded; failed or refunded: all of it.
  'refunds add up to what the render had returned, never above the charge': `
    SELECT g.id FROM generations g
    LEFT JOIN (SELECT generation_id, sum(amount_cents) AS amount FROM ledger_entries WHERE kind = 'refund' GROUP BY generation_id) r
      ON r.generation_id = g.id
    WHERE g.mode = 'live' AND (coalesce(r.amount, 0) <> g.refunded_cents OR g.refunded_cents > g.cost_cents
      OR CASE WHEN g.status IN ('failed', 'refunded') THEN g.refunded_cents <> g.cost_cents
              WHEN g.status = 'queued' THEN g.refunded_cents <> 0 ELSE false END)`,
  'no ledger entry for an unknown generation': `
    SELECT l.id FROM ledger_entries l LEFT JOIN generations g ON g.id = l.generation_id
    WHERE l.generation_id IS NOT NULL AND g.id IS NULL`,
  'day usage is what the key charged that day minus refunds': `
    SELECT coalesce(u.key_id, g.key_id) FROM key_day_usage u
    FULL JOIN (SELECT key_id, usage_day, sum(cost_cents - refunded_cents) AS spent FROM generations WHERE key_id IS NOT NULL GROUP BY key_id, usage_day) g
      ON g.key_id = u.key_id AND g.usage_day = u.day
    WHERE coalesce(u.spent_cents, 0) <> coalesce(g.spent, 0)`,
  // A key's render has the day its key's cap counted it on. Since budgets (migrations/036) a studio
  // render has its charge's day too, the one its budgets count it on; it has no key's day.
  "a key's render has its usage day": `SELECT id FROM generations WHERE key_id IS NOT NULL AND usage_day IS NULL`,
  // Not money, but kept the same way: each account's upload count (migrations/022) is its uploads not
  // marked deleted, and never above what is stored.
  "an account's upload count is its uploads not marked deleted": `
    SELECT coalesce(u.account_id, x.account_id) FROM upload_usage u
    FULL JOIN (SELECT account_id, sum(size_bytes) AS bytes, count(*) AS n FROM uploads WHERE deleted_at IS NULL GROUP BY account_id) x
      ON x.account_id = u.account_id
    WHERE coalesce(u.bytes, 0) <> coalesce(x.bytes, 0) OR coalesce(u.uploads, 0) <> coalesce(x.n, 0)`,
  'day usage within the cap': `
    SELECT u.key_id FROM key_day_usage u JOIN api_keys k ON k.id = u.key_id
    WHERE k.daily_cap_cents IS NOT NULL AND u.spent_cents > k.daily_cap_cents`,
  // Every budget's usage row holds what its subject spent in its period, by the charge's rule
  // (src/ledger/sql/create_generations.sql): charges less refunds, never past its limit.
  'budget usage = net spend of its period': `
    SELECT u.* FROM budget_usage u CROSS JOIN LATERAL (
      SELECT coalesce(sum(g.cost_cents - g.refunded_cents), 0) AS spent FROM generations g
        LEFT JOIN api_keys k ON k.id = g.key_id
      WHERE g.account_id = u.account_id AND g.usage_day IS NOT NULL
        AND rendergate_budget_start(u.period, g.usage_day) = u.period_start
        AND CASE u.scope WHEN 'key' THEN g.key_id = u.subject_id
          WHEN 'account' THEN g.mode = 'live'
          ELSE g.mode = 'live' AND coalesce(g.started_by, k.created_by) = u.subject_id END) s
    WHERE u.spent_cents <> s.spent`,
  'budget usage within its limit': `
    SELECT u.* FROM budget_usage u JOIN budgets b USING (account_id, scope, subject_id, period)
    WHERE u.spent_cents > b.limit_cents`,
};

export async function checkInvariants(db: Queryable): Promise<void> {
  for (const [rule, sql] of Object.entries(CHECKS)) {
    const { rows } = await db.query(sql);
    expect(rows, rule).toEqual([]);
  }
}
