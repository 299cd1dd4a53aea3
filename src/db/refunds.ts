// The transitions that return a charge. Each is one guarded UPDATE that only applies from the expected
// status, followed in the same transaction by the balance, the ledger entry and the day usage. The
// unique (generation_id, kind) index on the ledger makes a second refund impossible even if a guard
// were wrong; whatever runs twice, the money moves once.
import type { Tx } from './pool.ts';
import { newId } from '../domain/ids.ts';
import { leaseGuard, type Lease } from './lease.ts';

export interface RefundReason { status: 'failed' | 'refunded'; code: string; message: string }

/**
 * Moves a generation from `from` to a refunded final status and returns the cents returned; null (and
 * nothing changed) when it is no longer in `from` (or, with `lease`, when that attempt no longer holds it:
 * the failure of a superseded attempt changes nothing).
 */
export async function refundGeneration(tx: Tx, id: string, from: 'queued' | 'succeeded', reason: RefundReason, lease?: Lease): Promise<number | null> {
  const set = `UPDATE generations SET status = $2, refunded_cents = cost_cents, error_code = $3, error_message = $4,
       completed_at = coalesce(completed_at, now()), lease_owner = NULL, lease_until = NULL`;
  const returning = 'RETURNING account_id, key_id, usage_day, cost_cents, mode';
  const values = [id, reason.status, reason.code, reason.message.slice(0, 2000)];
  const { rows } = lease
    ? await tx.query(`${set} WHERE ${leaseGuard('$1', '$5', '$6')} ${returning}`, [...values, lease.owner, lease.attempt])
    : await tx.query(`${set} WHERE id = $1 AND status = $5 ${returning}`, [...values, from]);
  const g = rows[0];
  if (!g) return null;
  // A test render (migrations/014) was never charged: only its key's day is given back.
  const live = g.mode !== 'test';
  if (g.cost_cents > 0) {
    // The balance before the day usage, the order a batch of creates takes these rows in (migrations/006):
    // no deadlock between them.
    if (live) await tx.query('UPDATE accounts SET balance_cents = balance_cents + $2 WHERE id = $1', [g.account_id, g.cost_cents]);
    if (g.key_id && g.usage_day) {
      await tx.query('UPDATE key_day_usage SET spent_cents = spent_cents - $3 WHERE key_id = $1 AND day = $2',
        [g.key_id, g.usage_day, g.cost_cents]);
    }
    if (live) {
      await tx.query(
        `INSERT INTO ledger_entries (id, account_id, kind, amount_cents, generation_id) VALUES ($1, $2, 'refund', $3, $4)`,
        [newId('led'), g.account_id, g.cost_cents, id]);
    }
  }
  return live ? g.cost_cents as number : 0;
}
