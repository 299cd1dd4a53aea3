// The day of a daily cap: a calendar day in the configured zone (UTC by default), computed by the
// database from its transaction time, so every node agrees whatever their clocks say.
import type { Queryable } from '../db/pool.ts';

export async function spentToday(db: Queryable, keyId: string, timeZone: string): Promise<number> {
  const { rows } = await db.query(
    `SELECT coalesce((SELECT spent_cents FROM key_day_usage WHERE key_id = $1 AND day = (now() AT TIME ZONE $2)::date), 0) AS spent`,
    [keyId, timeZone]);
  return rows[0].spent as number;
}
