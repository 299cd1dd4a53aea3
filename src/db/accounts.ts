// The statements on `accounts`, reads of the balance included. The balance and the shortfall change
// only through the ledger (src/ledger/), which pairs each change with its entry in one transaction.
import type { Queryable } from './pool.ts';

export interface AccountRow {
  id: string;
  email: string;
  name: string | null;
  balance_cents: number;
  created_at: Date;
  shortfall_cents?: number;
  low_balance_cents?: number | null;
}

/** A new account, or null when the email is taken. */
export async function insertAccount(
  q: Queryable,
  id: string,
  email: string,
  name: string | null,
): Promise<AccountRow | null> {
  const { rows } = await q.query(
    'INSERT INTO accounts (id, email, name) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING *',
    [id, email, name],
  );
  return (rows[0] as AccountRow | undefined) ?? null;
}

export async function accountById(q: Queryable, id: string): Promise<AccountRow | null> {
  const { rows } = await q.query('SELECT * FROM accounts WHERE id = $1', [id]);
  return (rows[0] as AccountRow | undefined) ?? null;
}

/** Whether account `id` exists (a named statement: planned once a connection). */
export async function accountExists(q: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await q.query({
    name: 'account-exists',
    text: 'SELECT 1 FROM accounts WHERE id = $1',
    values: [id],
  });
  return rowCount === 1;
}

/** The account of an email, case-insensitively. */
export async function accountByEmail(
  q: Queryable,
  email: string,
): Promise<{ id: string; email: string } | null> {
  const { rows } = await q.query('SELECT id, email FROM accounts WHERE lower(email) = lower($1)', [
    email,
  ]);
  return (rows[0] as { id: string; email: string } | undefined) ?? null;
}

export async function balanceOf(q: Queryable, id: string): Promise<number> {
  const { rows } = await q.query<{ balance_cents: number }>(
    'SELECT balance_cents FROM accounts WHERE id = $1',
    [id],
  );
  return rows[0]?.balance_cents ?? 0;
}

/** Locks the account FOR KEY SHARE (as a foreign key check would), so as to take it before other rows. */
export async function shareAccount(q: Queryable, id: string): Promise<void> {
  await q.query('SELECT 1 FROM accounts WHERE id = $1 FOR KEY SHARE', [id]);
}

/** Up to 50 accounts whose email contains `q` (taken literally) or whose id is `q`; all when `q` is ''. */
export async function searchAccounts(q: Queryable, text: string): Promise<AccountRow[]> {
  const { rows } = await q.query(
    `SELECT id, email, name, balance_cents, created_at FROM accounts
     WHERE $1 = '' OR email ILIKE '%' || replace(replace(replace($1, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%' OR id = $1
     ORDER BY id DESC LIMIT 50`,
    [text],
  );
  return rows as AccountRow[];
}

// Billing (migrations/014): the shortfall a reversal leaves when the balance holds too little.
export interface ShortfallRow {
  id: string;
  email: string;
  balanceCents: number;
  shortfallCents: number;
}

/** Accounts that owe money after a reversal found too little: they start no live render until paid. */
export async function accountsWithShortfall(db: Queryable, limit = 100): Promise<ShortfallRow[]> {
  const { rows } = await db.query<{
    id: string;
    email: string;
    balance_cents: number;
    shortfall_cents: number;
  }>(
    `SELECT id, email, balance_cents, shortfall_cents FROM accounts WHERE shortfall_cents > 0
     ORDER BY id DESC LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    balanceCents: r.balance_cents,
    shortfallCents: r.shortfall_cents,
  }));
}

/** The account's balance and shortfall; null when there is no such account. */
export async function balanceAndShortfall(
  db: Queryable,
  accountId: string,
): Promise<{ balanceCents: number; shortfallCents: number } | null> {
  const { rows } = await db.query<{ balance_cents: number; shortfall_cents: number }>(
    'SELECT balance_cents, shortfall_cents FROM accounts WHERE id = $1',
    [accountId],
  );
  return rows[0]
    ? { balanceCents: rows[0].balance_cents, shortfallCents: rows[0].shortfall_cents }
    : null;
}

/** The whole row of an email's account, case-insensitively (the operator's `--account EMAIL`). */
export async function accountRowByEmail(q: Queryable, email: string): Promise<AccountRow | null> {
  const { rows } = await q.query(
    'SELECT id, email, name, balance_cents, created_at FROM accounts WHERE lower(email) = lower($1) ORDER BY id LIMIT 1',
    [email],
  );
  return (rows[0] as AccountRow | undefined) ?? null;
}

/**
 * A page of accounts newest first, after the id `beforeId` (keyset paging): all, or those whose email
 * contains `text` (LIKE's wildcards in it taken literally) or whose id is `text`.
 */
export async function pageAccounts(
  q: Queryable,
  opts: { text: string | null; beforeId: string | null; limit: number },
): Promise<AccountRow[]> {
  const { rows } = await q.query(
    `SELECT id, email, name, balance_cents, created_at FROM accounts
     WHERE ($1::text IS NULL OR id = $1
            OR email ILIKE '%' || replace(replace(replace($1, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%')
       AND ($2::text IS NULL OR id < $2)
     ORDER BY id DESC LIMIT $3`,
    [opts.text, opts.beforeId, opts.limit],
  );
  return rows as AccountRow[];
}

/**
 * Sets the account's name (null: none, the email shows instead); the name it had, or undefined when
 * there is no such account. The row stays locked until the caller's transaction ends, so two renames
 * of one account record the names in the order they took effect.
 */
export async function renameAccount(
  q: Queryable,
  id: string,
  name: string | null,
): Promise<{ before: string | null } | undefined> {
  const { rows } = await q.query<{ before: string | null }>(
    `UPDATE accounts a SET name = $2 FROM (SELECT name FROM accounts WHERE id = $1 FOR UPDATE) old
      WHERE a.id = $1 RETURNING old.name AS before`,
    [id, name],
  );
  return rows[0];
}
