// The statements on `rate_windows` (migrations/003): per-key request counts per one-minute window,
// leased by admission/rate-limits.ts.
import type { Queryable } from './pool.ts';

const LEASE = `
INSERT INTO rate_windows AS w (key_id, window_start, used, granted)
VALUES ($1, $2, LEAST($3::int, $4::int), LEAST($3::int, $4::int))
ON CONFLICT (key_id, window_start) DO UPDATE
  SET granted = LEAST($3::int, GREATEST($4::int - w.used, 0)),
      used = w.used + LEAST($3::int, GREATEST($4::int - w.used, 0))
RETURNING used, granted`;

/**
 * Takes up to `ask` requests of the window, never past `limit`: the window's count after, and the
 * grant.
 */
export async function leaseWindow(
  q: Queryable,
  keyId: string,
  window: number,
  ask: number,
  limit: number,
): Promise<{ used: number; granted: number }> {
  const { rows } = await q.query<{ used: number; granted: number }>({
    name: 'rate-lease',
    text: LEASE,
    values: [keyId, window, ask, limit],
  });
  return { used: rows[0].used, granted: rows[0].granted };
}

/**
 * Removes the windows that started before `before` (minutes since the epoch), folding each key's
 * newest into api_keys.last_used_at (shown in the studio) as they go.
 */
export async function pruneWindows(q: Queryable, before: number): Promise<void> {
  await q.query(
    `WITH gone AS (DELETE FROM rate_windows WHERE window_start < $1 RETURNING key_id, window_start)
    UPDATE api_keys k SET last_used_at = greatest(k.last_used_at, to_timestamp(g.m * 60))
    FROM (SELECT key_id, max(window_start) AS m FROM gone GROUP BY key_id) g WHERE k.id = g.key_id`,
    [before],
  );
}
