// Limits on attempts a stranger can make at the studio's doors, each counted before it is checked
// (db/studio-attempts.ts), so parallel attempts count one each:
// - wrong passwords: 10 per email and address, 100 per email from all addresses, and 100 per
//   address whatever the email, in any 15 minutes; a correct password is given back, so only wrong
//   ones count; past the per-email ceiling, an address within its own limits still has its
//   password checked (signInAttempt): a right one goes on to a second factor or a mailed link, so
//   nobody can lock an owner out by guessing at their email;
// - wrong second-factor codes: counted like wrong passwords (the address, the address and email),
//   and 100 per person from all addresses;
// - password-reset requests: 10 per email, 50 per address, in any 15 minutes;
// - operator console sign-ins: 10 wrong tokens per address in any 15 minutes, never for everyone;
// - sign-ups: RENDERGATE_SIGNUPS_PER_HOUR per address in any hour.
// Emails are counted lowercased, whether or not an account has them: a refusal reveals nothing.
// An IPv6 address counts as its /64 (address.ts).
import type { Db } from '../db/pool.ts';
import {
  giveBackAttempt,
  takeAttempt,
  type AttemptLimit,
  type Taken,
} from '../db/studio-attempts.ts';
import { addressKey } from './address.ts';
import { RefusedUntil } from './refused-until.ts';

const QUARTER_HOUR = 15 * 60;
const HOUR = 3600;
export const WRONG_PASSWORDS = { perEmailAndAddress: 10, perEmail: 100, perAddress: 100 };
export const RESET_REQUESTS = { perEmail: 10, perAddress: 50 };
export const CONSOLE_SIGNINS_PER_ADDRESS = 10;

const norm = (email: string) => email.trim().toLowerCase().slice(0, 254);

export const WRONG_CODES_PER_PERSON = 100;

export type Door =
  | { kind: 'signin' | 'signin-address' | 'reset'; ip: string; email: string }
  | { kind: 'code'; ip: string; email: string; personId: string }
  | { kind: 'console'; ip: string }
  | { kind: 'signup'; ip: string; perHour: number };

/** The scopes of one door, in one order of kinds: address, then address and email, then email. */
export function limitsOf(door: Door): AttemptLimit[] {
  const d = { ...door, ip: addressKey(door.ip) };
  const q = (scope: string, max: number): AttemptLimit => ({ scope, max, windowS: QUARTER_HOUR });
  switch (d.kind) {
    case 'signin':
      return [
        q(`signin-ip:${d.ip}`, WRONG_PASSWORDS.perAddress),
        q(`signin-pair:${d.ip}|${norm(d.email)}`, WRONG_PASSWORDS.perEmailAndAddress),
        q(`signin-email:${norm(d.email)}`, WRONG_PASSWORDS.perEmail),
      ];
    case 'signin-address':
      return limitsOf({ kind: 'signin', ip: door.ip, email: d.email }).slice(0, 2);
    case 'code':
      return [
        ...limitsOf({ kind: 'signin', ip: door.ip, email: d.email }).slice(0, 2),
        q(`code-person:${d.personId}`, WRONG_CODES_PER_PERSON),
      ];
    case 'reset':
      return [
        q(`reset-ip:${d.ip}`, RESET_REQUESTS.perAddress),
        q(`reset-email:${norm(d.email)}`, RESET_REQUESTS.perEmail),
      ];
    case 'console':
      return [q(`console-ip:${d.ip}`, CONSOLE_SIGNINS_PER_ADDRESS)];
    case 'signup':
      return [{ scope: `signup-ip:${d.ip}`, max: d.perHour, windowS: HOUR }];
  }
}

/**
 * The scopes the database refused in this process, each until the moment the database would first
 * let an attempt in again (the retry-after it gave: nothing is counted in a full scope, so nothing
 * can fill it further). An attempt in such a scope is refused here, without a statement, so a
 * flood of wrong passwords costs the database one refusal per scope and window, not one per try.
 * The database stays the one count across processes: every attempt not refused here is counted
 * there first. A right password given back here clears its scopes, as its give-back may have made
 * room. At most `max` scopes are held; past that the oldest go (they are asked about again, never
 * wrongly let in).
 */
export class RefusedScopes {
  private until: RefusedUntil;
  constructor(max = 10_000) {
    this.until = new RefusedUntil(max);
  }

  /** A refusal without the database, when one of the scopes is known to be full. */
  refusal(limits: AttemptLimit[], nowMs = Date.now()): Taken | null {
    for (const l of limits) {
      const left = this.until.left(l.scope, nowMs);
      if (left > 0) return { ok: false, scope: l.scope, retryAfterS: Math.ceil(left / 1000) };
    }
    return null;
  }

  note(taken: Taken, nowMs = Date.now()): void {
    if (!taken.ok) this.until.set(taken.scope, nowMs + taken.retryAfterS * 1000, nowMs);
  }

  clear(limits: AttemptLimit[]): void {
    for (const l of limits) this.until.delete(l.scope);
  }
}

/**
 * Counts one attempt at the door, or refuses it (with the seconds until it would be let in): from
 * `refused` when the database already refused one of its scopes, else from the database.
 */
export async function attempt(db: Db, d: Door, refused?: RefusedScopes): Promise<Taken> {
  const limits = limitsOf(d);
  const known = refused?.refusal(limits);
  if (known) return known;
  const taken = await takeAttempt(db, limits);
  refused?.note(taken);
  return taken;
}

/** The attempt succeeded (the right password or token): it does not count against anyone. */
export async function succeeded(db: Db, d: Door, refused?: RefusedScopes): Promise<void> {
  const limits = limitsOf(d);
  refused?.clear(limits);
  await giveBackAttempt(db, limits);
}

/** A sign-in attempt let in: `ceiling` when the email's own scope is full (the address's is not). */
export type SignInTaken =
  { ok: true; ceiling: boolean; counted: Door } | Extract<Taken, { ok: false }>;

/**
 * Counts a password sign-in at its three scopes; when only the email's is full, counts it at the
 * address's two and lets it in with `ceiling`, for a right password to go on to a second factor
 * or a mailed link (never to a session at once). `counted`: the door to give back if it is right.
 */
export async function signInAttempt(
  db: Db,
  ip: string,
  email: string,
  refused?: RefusedScopes,
): Promise<SignInTaken> {
  const door: Door = { kind: 'signin', ip, email };
  const taken = await attempt(db, door, refused);
  if (taken.ok) return { ok: true, ceiling: false, counted: door };
  if (!taken.scope.startsWith('signin-email:')) return taken;
  const byAddress: Door = { kind: 'signin-address', ip, email };
  const t = await attempt(db, byAddress, refused);
  return t.ok ? { ok: true, ceiling: true, counted: byAddress } : t;
}
