// The spend counters a charge raises and a refund lowers: each key's day (`key_day_usage`, its
// daily cap), and the budgets' periods (`budget_usage`, migrations/036). The charge raises them in
// sql/create_generations.sql, under the cap and the limits in the same statement; a refund lowers
// them here, in its own transaction, after the account's row (the order a create batch takes these
// rows in: no deadlock between them).
import type { Tx } from '../db/pool.ts';

/** Takes refunded cents back from the key's day the charge was counted on. */
export async function takeBackFromDay(
  tx: Tx,
  keyId: string,
  day: string,
  cents: number,
): Promise<void> {
  await tx.query(
    'UPDATE key_day_usage SET spent_cents = spent_cents - $3 WHERE key_id = $1 AND day = $2',
    [keyId, day, cents],
  );
}

/** A refunded render, as the budgets it counted in are found from it. */
export interface CountedRender {
  accountId: string;
  keyId: string | null;
  /** The day it was charged on (null: charged before budgets, counted in none). */
  day: string | null;
  live: boolean;
  /** The member who started it in the studio (else its key's creator counts it). */
  startedBy: string | null;
}

// The budgets the charge counted the render in, by the charge's own rule
// (sql/render_budgets.sql): its key's, and for a live render the account's and its member's; each
// in the period of its day.
const TAKE_BACK = `
UPDATE budget_usage u SET spent_cents = u.spent_cents - $6
FROM rendergate_render_budgets($1, $2, $4, $5, $3::date) b
WHERE u.account_id = $1 AND u.scope = b.scope AND u.subject_id = b.subject_id
  AND u.period = b.period AND u.period_start = b.start`;

/** Takes refunded cents back from every budget the render's charge counted in. */
export async function takeBackFromBudgets(tx: Tx, g: CountedRender, cents: number): Promise<void> {
  if (g.day === null) return;
  await tx.query({
    name: 'budget-take-back',
    text: TAKE_BACK,
    values: [g.accountId, g.keyId, g.day, g.live, g.startedBy, cents],
  });
}
