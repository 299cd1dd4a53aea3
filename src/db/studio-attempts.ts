// SQL of studio_attempts: attempts (sign-ins, sign-ups, reset requests, console sign-ins) counted
// per scope in fixed windows, BEFORE the attempt is checked. One guarded statement per scope adds
// one attempt unless the current and the previous window together already hold the limit; it waits
// for the row lock of a parallel attempt and then sees its count, so parallel attempts count one
// each and no more than the limit are ever let through in any span of one window's length.
import { transaction, type Db } from './pool.ts';

/** At most `max` attempts in `scope` per `windowS` seconds. */
export interface AttemptLimit { scope: string; max: number; windowS: number }

export type Taken = { ok: true } | { ok: false; scope: string; retryAfterS: number };

const windowOf = (nowS: number, windowS: number) => Math.floor(nowS / windowS) * windowS;

const TAKE = `
INSERT INTO studio_attempts AS a (scope, window_start, attempts)
SELECT $1::text, $2::bigint, 1 WHERE (SELECT coalesce(sum(p.attempts), 0) FROM studio_attempts p
  WHERE p.scope = $1::text AND p.window_start = $2::bigint - $4::bigint) < $3::int
ON CONFLICT (scope, window_start) DO UPDATE SET attempts = a.attempts + 1
  WHERE a.attempts + (SELECT coalesce(sum(p.attempts), 0) FROM studio_attempts p
    WHERE p.scope = $1::text AND p.window_start = $2::bigint - $4::bigint) < $3::int
RETURNING attempts`;

/**
 * Counts one attempt in every scope, or in none: when a scope is full, what was counted in the
 * others is rolled back and the answer says when that scope has room again. Scopes are taken in the
 * order given; callers give them in one fixed order of kinds, so parallel takes cannot deadlock.
 */
export async function takeAttempt(
  db: Db, limits: AttemptLimit[], nowMs = Date.now(),
): Promise<Taken> {
  const nowS = Math.floor(nowMs / 1000);
  try {
    await transaction(db, async (tx) => {
      for (const l of limits) {
        const w = windowOf(nowS, l.windowS);
        const { rowCount } = await tx.query(
          { name: 'studio-attempt-take', text: TAKE, values: [l.scope, w, l.max, l.windowS] });
        if (rowCount) continue;
        const { rows } = await tx.query(
          'SELECT attempts FROM studio_attempts WHERE scope = $1 AND window_start = $2',
          [l.scope, w]);
        // Room comes back when the previous window drops out, or a window later if this one is
        // full.
        const fullNow = (rows[0]?.attempts ?? 0) >= l.max;
        const retryAfterS = Math.max(1, w + l.windowS * (fullNow ? 2 : 1) - nowS);
        throw new Refused({ ok: false, scope: l.scope, retryAfterS });
      }
    });
  } catch (e) {
    // Rolled back: the scopes before it count nothing either.
    if (e instanceof Refused) return e.taken;
    throw e;
  }
  return { ok: true };
}

class Refused extends Error {
  constructor(readonly taken: Taken) { super('attempt refused'); }
}

/** Gives back an attempt that turned out right (a correct password): only wrong ones count. */
export async function giveBackAttempt(
  db: Db, limits: AttemptLimit[], nowMs = Date.now(),
): Promise<void> {
  const nowS = Math.floor(nowMs / 1000);
  await db.query(
    `UPDATE studio_attempts SET attempts = greatest(attempts - 1, 0)
     WHERE (scope, window_start) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))`,
    [limits.map((l) => l.scope), limits.map((l) => windowOf(nowS, l.windowS))]);
}

/** Windows that can no longer count (older than two of the longest window), for the janitor. */
export async function pruneAttempts(db: Db, longestWindowS: number, nowMs = Date.now()) {
  await db.query(
    `DELETE FROM studio_attempts WHERE ctid = ANY(ARRAY(
       SELECT ctid FROM studio_attempts WHERE window_start < $1 LIMIT 5000))`,
    [Math.floor(nowMs / 1000) - 2 * longestWindowS]);
}
