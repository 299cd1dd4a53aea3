// Limits on attempts a stranger can make at the studio's doors, each counted before it is checked
// (db/studio-attempts.ts), so parallel attempts count one each:
// - wrong passwords: 10 per email and address, 100 per email from all addresses, and 100 per address
//   whatever the email, in any 15 minutes; a correct password is given back, so only wrong ones count
//   and a person signing in from an address that is not throttled still signs in;
// - password-reset requests: 10 per email, 50 per address, in any 15 minutes;
// - operator console sign-ins: 10 wrong tokens per address in any 15 minutes, never for everyone;
// - sign-ups: RENDERGATE_SIGNUPS_PER_HOUR per address in any hour.
// Emails are counted lowercased, whether or not an account has them, so a refusal reveals nothing.
import type { Db } from '../db/pool.ts';
import { giveBackAttempt, takeAttempt, type AttemptLimit, type Taken } from '../db/studio-attempts.ts';

const QUARTER_HOUR = 15 * 60;
const HOUR = 3600;
export const WRONG_PASSWORDS = { perEmailAndAddress: 10, perEmail: 100, perAddress: 100 };
export const RESET_REQUESTS = { perEmail: 10, perAddress: 50 };
export const CONSOLE_SIGNINS_PER_ADDRESS = 10;

const norm = (email: string) => email.trim().toLowerCase().slice(0, 254);

export type Door = { kind: 'signin' | 'reset'; ip: string; email: string } | { kind: 'console'; ip: string }
  | { kind: 'signup'; ip: string; perHour: number };

/** The scopes of one door, in a fixed order of kinds (address, then address and email, then email). */
export function limitsOf(d: Door): AttemptLimit[] {
  const q = (scope: string, max: number): AttemptLimit => ({ scope, max, windowS: QUARTER_HOUR });
  switch (d.kind) {
    case 'signin': return [
      q(`signin-ip:${d.ip}`, WRONG_PASSWORDS.perAddress),
      q(`signin-pair:${d.ip}|${norm(d.email)}`, WRONG_PASSWORDS.perEmailAndAddress),
      q(`signin-email:${norm(d.email)}`, WRONG_PASSWORDS.perEmail)];
    case 'reset': return [q(`reset-ip:${d.ip}`, RESET_REQUESTS.perAddress), q(`reset-email:${norm(d.email)}`, RESET_REQUESTS.perEmail)];
    case 'console': return [q(`console-ip:${d.ip}`, CONSOLE_SIGNINS_PER_ADDRESS)];
    case 'signup': return [{ scope: `signup-ip:${d.ip}`, max: d.perHour, windowS: HOUR }];
  }
}

/** Counts one attempt at the door, or refuses it (with the seconds until it would be let in). */
export const attempt = (db: Db, d: Door): Promise<Taken> => takeAttempt(db, limitsOf(d));

/** The attempt succeeded (the right password or token): it does not count against anyone. */
export const succeeded = (db: Db, d: Door): Promise<void> => giveBackAttempt(db, limitsOf(d));
