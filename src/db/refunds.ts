// The transitions that return a charge. Each is one guarded UPDATE that only applies from the expected
// status, followed in the same transaction by the balance, the ledger entry and the day usage. The
// unique (generation_id, kind) index on the ledger makes a second refund impossible even if a guard
// were wrong; whatever runs twice, the money moves once.
import type { Tx } from './pool.ts';
import { newId } from '../domain/ids.ts';

export interface RefundReason { status: 'failed' | 'refunded'; code: string; message: string }

/**
 * Moves a generation from `from` to a refunded final status and returns the cents returned; null (and
 * nothing changed) when it is no longer in `from` (or, with `owner`, no longer leased by that worker).
 */
export async function refundGeneration(tx: Tx, id: string, from: 'queued' | 'succeeded', reason: RefundReason, owner?: string): Promise<number | null> {
  const { rows } = await tx.query(
    `UPDATE generations SET status = $2, refunded_cents = cost_cents, error_code = $3, error_message = $4,
       completed_at = coalesce(completed_at, now()), lease_owner = NULL, lease_until = NULL
     WHERE id = $1 AND status = $5 AND ($6::text IS NULL OR lease_owner = $6)
     RETURNING account_id, key_id, usage_day, cost_cents`,
    [id, reason.status, reason.code, reason.message.slice(0, 2000), from, owner ?? null]);
  const g = rows[0];
  if (!g) return null;
  if (g.cost_cents > 0) {
    // The balance before the day usage, the order a batch of creates takes these rows in (migrations/006):
    // no deadlock between them.
    await tx.query('UPDATE accounts SET balance_cents = balance_cents + $2 WHERE id = $1', [g.account_id, g.cost_cents]);
    if (g.key_id && g.usage_day) {
      await tx.query('UPDATE key_day_usage SET spent_cents = spent_cents - $3 WHERE key_id = $1 AND day = $2',
        [g.key_id, g.usage_day, g.cost_cents]);
    }
    await tx.query(
      `INSERT INTO ledger_entries (id, account_id, kind, amount_cents, generation_id) VALUES ($1, $2, 'refund', $3, $4)`,
      [newId('led'), g.account_id, g.cost_cents, id]);
  }
  return g.cost_cents as number;
}
