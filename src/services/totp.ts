// The TOTP second factor's rules (RFC 6238 by the otpauth library: SHA-1, 6 digits, 30 s), and
// its recovery codes. No I/O: services/second-factor.ts stores what these make.
import crypto from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';

export const PERIOD_S = 30;
/** Steps either side of now a code may be of: ±30 s of clock drift, never 90 s (3 steps). */
export const WINDOW = 1;
export const RECOVERY_CODES = 10;

const totpOf = (secret: string, label = 'Rendergate') =>
  new TOTP({
    issuer: 'Rendergate',
    label,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_S,
    secret: Secret.fromBase32(secret),
  });

/** A new secret, 160 bits as RFC 4226 recommends, in base32. */
export const newSecret = () => new Secret({ size: 20 }).base32;

/** What the enrolment shows: the otpauth:// URI as an SVG QR code (a data: URL), and the text. */
export async function enrolment(secret: string, email: string) {
  const uri = totpOf(secret, email).toString();
  const qr = await QRCode.toDataURL(uri, { errorCorrectionLevel: 'M', margin: 2, width: 220 });
  // grouped by four, as authenticator apps show it and people type it
  return { qr, text: secret.replace(/(.{4})/g, '$1 ').trim(), uri };
}

/**
 * The time step of a right 6-digit code within WINDOW steps of now, or null. Only the step: its
 * single use is the database's (db/second-factor.ts useStep).
 */
export function codeStep(secret: string, code: string, nowMs = Date.now()): number | null {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totpOf(secret).validate({ token, timestamp: nowMs, window: WINDOW });
  return delta === null ? null : Math.floor(nowMs / 1000 / PERIOD_S) + delta;
}

/** The code of a step, for tests and nothing else of ours. */
export const codeAt = (secret: string, nowMs: number) =>
  totpOf(secret).generate({ timestamp: nowMs });

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'; // no 0/O or 1/I to misread

/** Ten new recovery codes, XXXXX-XXXXX: 50 random bits each, so a plain SHA-256 keeps them safe. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const bytes = crypto.randomBytes(10);
    const chars = [...bytes].map((b) => ALPHABET[b & 31]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** A recovery code as typed (spaces, dashes, lower case) in the one form that is hashed. */
export const normalizeRecoveryCode = (typed: string) => typed.replace(/[\s-]+/g, '').toUpperCase();

/** The stored hash of a recovery code, however it was typed; null when it cannot be one. */
export function recoveryHash(typed: string): Buffer | null {
  const n = normalizeRecoveryCode(typed);
  if (!/^[A-Z0-9]{10}$/.test(n)) return null;
  return crypto.createHash('sha256').update(`rendergate recovery code\n${n}`).digest();
}
