// Limits on attempts a stranger can make at the studio's doors, each counted before it is checked
// (db/studio-attempts.ts), so parallel attempts count one each:
// - wrong passwords: 10 per email and address, 100 per email from all addresses, and 100 per
//   address whatever the email, in any 15 minutes; a correct password is given back, so only wrong
//   ones count and a person signing in from an address that is not throttled still signs in;
// - password-reset requests: 10 per email, 50 per address, in any 15 minutes;
// - operator console sign-ins: 10 wrong tokens per address in any 15 minutes, never for everyone;
// - sign-ups: RENDERGATE_SIGNUPS_PER_HOUR per address in any hour.
// Emails are counted lowercased, whether or not an account has them: a refusal reveals nothing.
// An IPv6 address counts as its /64 (one host usually holds a whole /64).
import net from 'node:net';
import type { Db } from '../db/pool.ts';
import {
  giveBackAttempt,
  takeAttempt,
  type AttemptLimit,
  type Taken,
} from '../db/studio-attempts.ts';

const QUARTER_HOUR = 15 * 60;
const HOUR = 3600;
export const WRONG_PASSWORDS = { perEmailAndAddress: 10, perEmail: 100, perAddress: 100 };
export const RESET_REQUESTS = { perEmail: 10, perAddress: 50 };
export const CONSOLE_SIGNINS_PER_ADDRESS = 10;

const norm = (email: string) => email.trim().toLowerCase().slice(0, 254);

/** The address as counted: IPv4 (also IPv4-mapped) as it is, IPv6 as its /64 prefix. */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!net.isIPv6(ip)) return ip;
  const [head, tail = ''] = ip.toLowerCase().split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t]
    : h;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export type Door =
  | { kind: 'signin' | 'reset'; ip: string; email: string }
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

/** Counts one attempt at the door, or refuses it (with the seconds until it would be let in). */
export const attempt = (db: Db, d: Door): Promise<Taken> => takeAttempt(db, limitsOf(d));

/** The attempt succeeded (the right password or token): it does not count against anyone. */
export const succeeded = (db: Db, d: Door): Promise<void> => giveBackAttempt(db, limitsOf(d));
