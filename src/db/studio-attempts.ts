// SQL of studio_attempts: attempts (sign-ins, sign-ups, reset requests, console sign-ins) counted
// per scope in fixed windows, BEFORE the attempt is checked. One statement adds one attempt to each
// scope unless the current and the previous window together already hold a scope's limit; it waits
// for the row locks of a parallel attempt and then sees its count, so parallel attempts count one
// each and no more than the limit are ever let through in any span of one window's length.
import type { Db, Queryable } from './pool.ts';

/** At most `max` attempts in `scope` per `windowS` seconds. */
export interface AttemptLimit {
  scope: string;
  max: number;
  windowS: number;
}

export type Taken = { ok: true } | { ok: false; scope: string; retryAfterS: number };

const windowOf = (nowS: number, windowS: number) => Math.floor(nowS / windowS) * windowS;

/**
 * Counts one attempt in every scope, or in none (rendergate_take_attempt, migrations/013, one
 * statement): when a scope is full nothing is counted and the answer says when that scope has room
 * again. Rows are locked in the order given; callers give scopes in one fixed order of kinds, so
 * parallel takes cannot deadlock.
 */
export async function takeAttempt(
  q: Queryable,
  limits: AttemptLimit[],
  nowMs = Date.now(),
): Promise<Taken> {
  const nowS = Math.floor(nowMs / 1000);
  const { rows } = await q.query<{ refused: number; current_attempts: number }>({
    name: 'studio-attempt-take',
    text: `SELECT refused, current_attempts
           FROM rendergate_take_attempt($1::text[], $2::int[], $3::bigint[], $4)`,
    values: [
      limits.map((l) => l.scope),
      limits.map((l) => l.max),
      limits.map((l) => l.windowS),
      nowS,
    ],
  });
  const refused = rows[0].refused;
  if (refused === 0) return { ok: true };
  const l = limits[refused - 1];
  const w = windowOf(nowS, l.windowS);
  // Room comes back when the previous window drops out, or a window later if this one is full.
  const fullNow = rows[0].current_attempts >= l.max;
  const retryAfterS = Math.max(1, w + l.windowS * (fullNow ? 2 : 1) - nowS);
  return { ok: false, scope: l.scope, retryAfterS };
}

/**
 * Gives back an attempt that turned out right (a correct password), or was never checked (the process
 * too busy): only wrong ones count. One row per statement, in the order given: one statement over
 * the three rows locked them in whatever order its plan read them, and beside takes, which lock in
 * the order given, it deadlocked (test/studio/password-checks.test.ts); a statement that locks one
 * row holds no other while it waits.
 */
export async function giveBackAttempt(
  db: Db,
  limits: AttemptLimit[],
  nowMs = Date.now(),
): Promise<void> {
  const nowS = Math.floor(nowMs / 1000);
  for (const l of limits)
    await db.query({
      name: 'studio-attempt-give-back',
      text: `UPDATE studio_attempts SET attempts = greatest(attempts - 1, 0)
             WHERE scope = $1 AND window_start = $2`,
      values: [l.scope, windowOf(nowS, l.windowS)],
    });
}

/** Windows that can no longer count (older than two of the longest window), for the janitor. */
export async function pruneAttempts(db: Db, longestWindowS: number, nowMs = Date.now()) {
  await db.query(
    `DELETE FROM studio_attempts WHERE ctid = ANY(ARRAY(
       SELECT ctid FROM studio_attempts WHERE window_start < $1 LIMIT 5000))`,
    [Math.floor(nowMs / 1000) - 2 * longestWindowS],
  );
}
