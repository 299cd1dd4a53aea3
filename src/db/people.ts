// The statements on `people` (migrations/030): a person signs in with an email and a password and
// is a member of accounts (db/memberships.ts). Passwords are in db/studio-passwords.ts.
import type { Queryable } from './pool.ts';

export interface PersonRow {
  id: string;
  email: string;
  has_password: boolean;
}

const COLUMNS = 'id, email, password_hash IS NOT NULL AS has_password';

/** The person of an email, case-insensitively. */
export async function personByEmail(q: Queryable, email: string): Promise<PersonRow | null> {
  const { rows } = await q.query(`SELECT ${COLUMNS} FROM people WHERE lower(email) = lower($1)`, [
    email,
  ]);
  return (rows[0] as PersonRow | undefined) ?? null;
}

export async function personById(q: Queryable, id: string): Promise<PersonRow | null> {
  const { rows } = await q.query(`SELECT ${COLUMNS} FROM people WHERE id = $1`, [id]);
  return (rows[0] as PersonRow | undefined) ?? null;
}

/** The person of `email`, made (without a password) when there is none yet. */
export async function personFor(q: Queryable, id: string, email: string): Promise<PersonRow> {
  await q.query('INSERT INTO people (id, email) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
    id,
    email,
  ]);
  return (await personByEmail(q, email))!;
}

/** The account the person's next sign-in opens. */
export async function setLastAccount(
  q: Queryable,
  personId: string,
  accountId: string,
): Promise<void> {
  await q.query(
    'UPDATE people SET last_account_id = $2 WHERE id = $1 AND last_account_id IS DISTINCT FROM $2',
    [personId, accountId],
  );
}
