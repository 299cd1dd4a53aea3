// Read models of the studio's pages: keys with their use, spend per key and per model, ledger pages.
import type { Db } from '../db/pool.ts';

export interface KeyRow {
  id: string; name: string; start: string; createdAt: Date; lastUsedAt: Date | null; revokedAt: Date | null;
  dailyCapCents: number | null; rateLimitPerMinute: number; spentTodayCents: number; mode: 'live' | 'test';
}

/** The account's keys, newest first. Last use is to the minute: the newest request window of the key. */
export async function listKeys(db: Db, accountId: string, timeZone: string): Promise<KeyRow[]> {
  const { rows } = await db.query(
    `SELECT k.id, k.name, k.start, k.created_at, k.revoked_at, k.daily_cap_cents, k.rate_limit_per_minute, k.mode,
            greatest(k.last_used_at, (SELECT to_timestamp(max(w.window_start) * 60) FROM rate_windows w WHERE w.key_id = k.id)) AS last_used_at,
            coalesce(u.spent_cents, 0) AS spent_today
     FROM api_keys k LEFT JOIN key_day_usage u ON u.key_id = k.id AND u.day = (now() AT TIME ZONE $2)::date
     WHERE k.account_id = $1 ORDER BY k.id DESC`, [accountId, timeZone]);
  return rows.map((r) => ({
    id: r.id, name: r.name, start: r.start, createdAt: r.created_at, lastUsedAt: r.last_used_at, revokedAt: r.revoked_at,
    dailyCapCents: r.daily_cap_cents, rateLimitPerMinute: r.rate_limit_per_minute, spentTodayCents: r.spent_today, mode: r.mode,
  }));
}

export interface SpendRow { label: string; renders: number; spentCents: number }

/** Spend (charges minus refunds) of live renders created in [from, to), per key (the studio is "Studio") and per model. */
export async function spend(db: Db, accountId: string, from: Date, to: Date): Promise<{ byKey: SpendRow[]; byModel: SpendRow[] }> {
  const base = `FROM generations g LEFT JOIN api_keys k ON k.id = g.key_id
                WHERE g.account_id = $1 AND g.created_at >= $2 AND g.created_at < $3 AND g.mode = 'live'`;
  const agg = 'count(*)::int AS renders, coalesce(sum(g.cost_cents - g.refunded_cents), 0)::bigint AS spent';
  const [byKey, byModel] = await Promise.all([
    db.query(`SELECT coalesce(k.name || ' (' || k.start || '…)', 'Studio') AS label, ${agg} ${base} GROUP BY 1 ORDER BY spent DESC, label`, [accountId, from, to]),
    db.query(`SELECT g.model_id AS label, ${agg} ${base} GROUP BY 1 ORDER BY spent DESC, label`, [accountId, from, to]),
  ]);
  const view = (r: Record<string, unknown>): SpendRow => ({ label: r.label as string, renders: r.renders as number, spentCents: r.spent as number });
  return { byKey: byKey.rows.map(view), byModel: byModel.rows.map(view) };
}
