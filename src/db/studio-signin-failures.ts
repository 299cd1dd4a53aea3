// The statements on `studio_signin_failures` (migrations/011): failed sign-ins per scope and window.
import type { Queryable } from './pool.ts';

/** Failures per scope in windows from `since` on. */
export async function failuresSince(q: Queryable, scopes: string[], since: number): Promise<Array<{ scope: string; n: number }>> {
  const { rows } = await q.query(
    `SELECT scope, sum(failures)::int AS n FROM studio_signin_failures
     WHERE scope = ANY($1) AND window_start >= $2 GROUP BY scope`, [scopes, since]);
  return rows as Array<{ scope: string; n: number }>;
}

/** Counts one failure for each scope in `window`, and drops windows before `keepFrom`. */
export async function addFailure(q: Queryable, scopes: string[], window: number, keepFrom: number): Promise<void> {
  await q.query(
    `INSERT INTO studio_signin_failures AS f (scope, window_start, failures) SELECT s, $2, 1 FROM unnest($1::text[]) s
     ON CONFLICT (scope, window_start) DO UPDATE SET failures = f.failures + 1`, [scopes, window]);
  // Old windows go as new ones are written: no sweeper needed.
  await q.query('DELETE FROM studio_signin_failures WHERE window_start < $1', [keepFrom]);
}
