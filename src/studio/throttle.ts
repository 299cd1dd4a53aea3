// Sign-in throttle: failures are counted per client address and per email (lowercased, whether or not an
// account has it, so the answer reveals nothing) in quarter-hour windows; the current and the previous
// window together must stay under the limit. A success does not reset the count: guessing between
// successes of one's own account is still guessing.
import type { Db } from '../db/pool.ts';

const WINDOW_S = 15 * 60;
export const PER_EMAIL = 10;
export const PER_ADDRESS = 50;

/** `kind` keeps counts apart: asking for reset mails must not lock anyone out of signing in. */
export type ThrottleKind = '' | 'reset-';
const scopes = (ip: string, email: string, kind: ThrottleKind) => [`${kind}ip:${ip}`, `${kind}email:${email.toLowerCase().slice(0, 300)}`];

export async function throttled(db: Db, ip: string, email: string, kind: ThrottleKind = ''): Promise<boolean> {
  const w = Math.floor(Date.now() / 1000 / WINDOW_S);
  const { rows } = await db.query(
    `SELECT scope, sum(failures)::int AS n FROM studio_signin_failures WHERE scope = ANY($1) AND window_start >= $2 GROUP BY scope`,
    [scopes(ip, email, kind), w - 1]);
  return rows.some((r) => r.n >= (String(r.scope).startsWith(`${kind}ip:`) ? PER_ADDRESS : PER_EMAIL));
}

export async function recordFailure(db: Db, ip: string, email: string, kind: ThrottleKind = ''): Promise<void> {
  const w = Math.floor(Date.now() / 1000 / WINDOW_S);
  await db.query(
    `INSERT INTO studio_signin_failures AS f (scope, window_start, failures) SELECT s, $2, 1 FROM unnest($1::text[]) s
     ON CONFLICT (scope, window_start) DO UPDATE SET failures = f.failures + 1`, [scopes(ip, email, kind), w]);
  // Old windows go as new ones are written: no sweeper needed.
  await db.query('DELETE FROM studio_signin_failures WHERE window_start < $1', [w - 2]);
}
