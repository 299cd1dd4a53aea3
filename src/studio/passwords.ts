// Passwords: argon2id (OWASP's minimum parameters: 19 MiB, 2 passes, 1 lane), one hash per account.
// Sign-in answers the same whatever is wrong (unknown email, no password set, wrong password) and takes
// the same time: an unknown email is checked against a dummy hash.
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { transaction, type Db } from '../db/pool.ts';
import { newId } from '../domain/ids.ts';

const OPTIONS = { algorithm: 2 as Algorithm /* Argon2id */, memoryCost: 19_456, timeCost: 2, parallelism: 1 };
export const MIN_PASSWORD = 10;
export const MAX_PASSWORD = 200;
const DUMMY = hash('not a password of anyone', OPTIONS);

export const hashPassword = (password: string) => hash(password, OPTIONS);

/** Why a new password is refused, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD) return `Use at least ${MIN_PASSWORD} characters.`;
  if (password.length > MAX_PASSWORD) return `Use at most ${MAX_PASSWORD} characters.`;
  return null;
}

export { EMAIL } from '../domain/email.ts';

/** The account of this email and password, or null; always costs one argon2 verification. */
export async function checkPassword(db: Db, email: string, password: string): Promise<string | null> {
  const { rows } = await db.query(
    `SELECT a.id, p.password_hash FROM accounts a JOIN studio_passwords p ON p.account_id = a.id WHERE lower(a.email) = lower($1)`, [email]);
  const r = rows[0];
  const ok = await verify(r?.password_hash ?? await DUMMY, password.slice(0, MAX_PASSWORD)).catch(() => false);
  return r && ok ? (r.id as string) : null;
}

export async function setPassword(db: Db, accountId: string, password: string): Promise<void> {
  const h = await hashPassword(password);
  await db.query(`INSERT INTO studio_passwords (account_id, password_hash) VALUES ($1, $2)
    ON CONFLICT (account_id) DO UPDATE SET password_hash = EXCLUDED.password_hash, updated_at = now()`, [accountId, h]);
}

/** Self sign-up: a new account with its password, or null when the email is taken. */
export async function signUp(db: Db, email: string, password: string): Promise<string | null> {
  const h = await hashPassword(password);
  return transaction(db, async (tx) => {
    const { rows } = await tx.query('INSERT INTO accounts (id, email) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING id', [newId('acct'), email]);
    if (!rows[0]) return null;
    await tx.query('INSERT INTO studio_passwords (account_id, password_hash) VALUES ($1, $2)', [rows[0].id, h]);
    return rows[0].id as string;
  });
}

export async function currentPasswordOk(db: Db, accountId: string, password: string): Promise<boolean> {
  const { rows } = await db.query('SELECT password_hash FROM studio_passwords WHERE account_id = $1', [accountId]);
  return verify(rows[0]?.password_hash ?? await DUMMY, password.slice(0, MAX_PASSWORD)).catch(() => false);
}
