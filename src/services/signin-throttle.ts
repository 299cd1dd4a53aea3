// Sign-in throttle: failures are counted per client address and per email (lowercased, whether or not an
// account has it, so the answer reveals nothing) in quarter-hour windows; the current and the previous
// window together must stay under the limit. A success does not reset the count: guessing between
// successes of one's own account is still guessing.
import type { Db } from '../db/pool.ts';
import { addFailure, failuresSince } from '../db/studio-signin-failures.ts';

const WINDOW_S = 15 * 60;
export const PER_EMAIL = 10;
export const PER_ADDRESS = 50;

/** `kind` keeps counts apart: asking for reset mails must not lock anyone out of signing in. */
export type ThrottleKind = '' | 'reset-';
const scopes = (ip: string, email: string, kind: ThrottleKind) => [`${kind}ip:${ip}`, `${kind}email:${email.toLowerCase().slice(0, 300)}`];

export async function throttled(db: Db, ip: string, email: string, kind: ThrottleKind = ''): Promise<boolean> {
  const w = Math.floor(Date.now() / 1000 / WINDOW_S);
  const rows = await failuresSince(db, scopes(ip, email, kind), w - 1);
  return rows.some((r) => r.n >= (String(r.scope).startsWith(`${kind}ip:`) ? PER_ADDRESS : PER_EMAIL));
}

export async function recordFailure(db: Db, ip: string, email: string, kind: ThrottleKind = ''): Promise<void> {
  const w = Math.floor(Date.now() / 1000 / WINDOW_S);
  // Old windows go as new ones are written: no sweeper needed.
  await addFailure(db, scopes(ip, email, kind), w, w - 2);
}
