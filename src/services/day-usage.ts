// The day of a daily cap: a calendar day in the configured zone (UTC by default), computed by the
// database from its transaction time, so every node agrees whatever their clocks say.
import type { Queryable } from '../db/pool.ts';

/** What the key has spent today (charges minus refunds), and when today ends in the cap's zone. */
export async function dayUsage(db: Queryable, keyId: string, timeZone: string): Promise<{ spent: number; resetsAt: Date }> {
  const { rows } = await db.query({ name: 'day-usage',
    text: `SELECT coalesce((SELECT spent_cents FROM key_day_usage WHERE key_id = $1 AND day = (now() AT TIME ZONE $2)::date), 0) AS spent,
                  (((now() AT TIME ZONE $2)::date + 1)::timestamp AT TIME ZONE $2) AS resets_at`,
    values: [keyId, timeZone] });
  return { spent: rows[0].spent as number, resetsAt: rows[0].resets_at as Date };
}
