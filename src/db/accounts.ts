// SQL of the accounts table: lookups for operators (by email, by part of an email, newest first).
import type { Queryable } from './pool.ts';

export interface AccountRow {
  id: string; email: string; name: string | null; balance_cents: number; created_at: Date;
}

const COLUMNS = 'id, email, name, balance_cents, created_at';

/** The account whose email is `email`, compared case-insensitively (as sign-in does). */
export async function accountByEmail(db: Queryable, email: string): Promise<AccountRow | null> {
  const { rows } = await db.query<AccountRow>(
    `SELECT ${COLUMNS} FROM accounts WHERE lower(email) = lower($1) ORDER BY id LIMIT 1`, [email]);
  return rows[0] ?? null;
}

/**
 * Accounts newest first, after the id `beforeId` (keyset paging): all of them, or those whose email
 * contains `text` (LIKE's wildcards in it are taken literally) or whose id is `text`.
 */
export async function searchAccounts(db: Queryable, opts: { text: string | null; beforeId: string | null; limit: number }): Promise<AccountRow[]> {
  const { rows } = await db.query<AccountRow>(
    `SELECT ${COLUMNS} FROM accounts
     WHERE ($1::text IS NULL OR id = $1
            OR email ILIKE '%' || replace(replace(replace($1, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%')
       AND ($2::text IS NULL OR id < $2)
     ORDER BY id DESC LIMIT $3`,
    [opts.text, opts.beforeId, opts.limit]);
  return rows;
}
