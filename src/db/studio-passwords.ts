// The statements on `studio_passwords` (migrations/011): one argon2id hash per account.
import type { Queryable } from './pool.ts';

/** The account of an email (case-insensitively) with its password hash, when it has one. */
export async function passwordOfEmail(
  q: Queryable,
  email: string,
): Promise<{ id: string; password_hash: string } | null> {
  const { rows } = await q.query(
    `SELECT a.id, p.password_hash FROM accounts a JOIN studio_passwords p ON p.account_id = a.id
     WHERE lower(a.email) = lower($1)`,
    [email],
  );
  return (rows[0] as { id: string; password_hash: string } | undefined) ?? null;
}

export async function passwordOf(q: Queryable, accountId: string): Promise<string | null> {
  const { rows } = await q.query<{ password_hash: string }>(
    'SELECT password_hash FROM studio_passwords WHERE account_id = $1',
    [accountId],
  );
  return rows[0]?.password_hash ?? null;
}

/** Sets (or replaces) the account's password hash. */
export async function upsertPassword(q: Queryable, accountId: string, hash: string): Promise<void> {
  await q.query(
    `INSERT INTO studio_passwords (account_id, password_hash) VALUES ($1, $2)
    ON CONFLICT (account_id) DO UPDATE SET password_hash = EXCLUDED.password_hash, updated_at = now()`,
    [accountId, hash],
  );
}

/** The first password of a new account. */
export async function insertPassword(q: Queryable, accountId: string, hash: string): Promise<void> {
  await q.query('INSERT INTO studio_passwords (account_id, password_hash) VALUES ($1, $2)', [
    accountId,
    hash,
  ]);
}
