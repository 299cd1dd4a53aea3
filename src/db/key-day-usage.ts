// Reads of `key_day_usage`: what each key spent on each day of its daily cap. Only the ledger writes
// it (src/ledger/): a charge adds to it in rendergate_create_generations, a refund takes back.
import type { Queryable } from './pool.ts';

/** What the key has spent today (charges minus refunds), and when today ends in the cap's zone. */
export async function spentToday(
  q: Queryable,
  keyId: string,
  timeZone: string,
): Promise<{ spent: number; resetsAt: Date }> {
  const { rows } = await q.query<{ spent: number; resets_at: Date }>({
    name: 'day-usage',
    text: `SELECT coalesce((SELECT spent_cents FROM key_day_usage
                            WHERE key_id = $1 AND day = (now() AT TIME ZONE $2)::date), 0) AS spent,
                  (((now() AT TIME ZONE $2)::date + 1)::timestamp AT TIME ZONE $2) AS resets_at`,
    values: [keyId, timeZone],
  });
  return { spent: rows[0].spent, resetsAt: rows[0].resets_at };
}
