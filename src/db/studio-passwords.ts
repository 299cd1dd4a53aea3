// The statements on people's passwords (migrations/030: one argon2id hash per person, on `people`;
// migrations/011's studio_passwords is the previous release's, kept in step by a trigger).
import type { Queryable } from './pool.ts';

/**
 * The account a person's sign-in opens: the last one used while still a member, else the one
 * joined first. `$1` is the person's id.
 */
export const OPENS = `COALESCE(
  (SELECT m.account_id FROM memberships m JOIN people pp ON pp.id = m.person_id
    WHERE m.person_id = $1 AND m.account_id = pp.last_account_id),
  (SELECT m.account_id FROM memberships m WHERE m.person_id = $1
    ORDER BY m.joined_at, m.account_id LIMIT 1))`;

/** A person of an email (case-insensitively): id, password hash (if any), and the account to open. */
export async function passwordOfEmail(
  q: Queryable,
  email: string,
): Promise<{ id: string; password_hash: string; account_id: string | null } | null> {
  const { rows } = await q.query(
    `SELECT p.id, p.password_hash, (${OPENS.replaceAll('$1', 'p.id')}) AS account_id
       FROM people p WHERE lower(p.email) = lower($1) AND p.password_hash IS NOT NULL`,
    [email],
  );
  return (rows[0] as { id: string; password_hash: string; account_id: string | null }) ?? null;
}

/** The account a person's sign-in opens (OPENS), or null when they are a member of none. */
export async function accountToOpen(q: Queryable, personId: string): Promise<string | null> {
  const { rows } = await q.query<{ a: string | null }>(`SELECT ${OPENS} AS a`, [personId]);
  return rows[0]?.a ?? null;
}

export async function passwordOf(q: Queryable, personId: string): Promise<string | null> {
  const { rows } = await q.query<{ password_hash: string | null }>(
    'SELECT password_hash FROM people WHERE id = $1',
    [personId],
  );
  return rows[0]?.password_hash ?? null;
}

/** Sets (or replaces) the person's password hash. */
export async function upsertPassword(q: Queryable, personId: string, hash: string): Promise<void> {
  await q.query('UPDATE people SET password_hash = $2, password_updated_at = now() WHERE id = $1', [
    personId,
    hash,
  ]);
}
