// The spend counters a charge raises and a refund lowers: each key's day (`key_day_usage`, its
// daily cap), and next the budgets. The charge raises them in sql/create_generations.sql, under the
// cap in the same statement; a refund lowers them here, in its own transaction, after the balance
// (the order a create batch takes these rows in: no deadlock between them).
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
