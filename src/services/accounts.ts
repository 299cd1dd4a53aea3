// Accounts and their money history. The balance changes only together with a ledger entry, in one
// transaction; the CHECK on accounts.balance_cents makes a negative balance impossible.
import { ApiError } from '../domain/errors.ts';
import { transaction, type Db, type Queryable } from '../db/pool.ts';
import { newId } from '../domain/ids.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';
import { accountByEmail, searchAccounts } from '../db/accounts.ts';
import { isId } from '../domain/ids.ts';

/** The largest balance an account can hold: 2^53 - 1, the largest integer a JSON client reads exactly. */
export const MAX_BALANCE_CENTS = Number.MAX_SAFE_INTEGER;

export interface AccountView { id: string; email: string; name: string | null; balanceCents: number; createdAt: string }

const view = (r: Record<string, unknown>): AccountView => ({
  id: r.id as string, email: r.email as string, name: (r.name as string | null) ?? null,
  balanceCents: r.balance_cents as number, createdAt: (r.created_at as Date).toISOString(),
});

export async function createAccount(db: Db, email: string, name: string | null): Promise<AccountView> {
  const { rows } = await db.query(
    `INSERT INTO accounts (id, email, name) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING *`,
    [newId('acct'), email, name]);
  if (!rows[0]) throw new ApiError('INVALID_INPUT', 'An account with this email already exists.', [{ field: 'email', message: 'already in use' }]);
  return view(rows[0]);
}

export async function getAccount(db: Queryable, id: string): Promise<AccountView> {
  const { rows } = await db.query('SELECT * FROM accounts WHERE id = $1', [id]);
  if (!rows[0]) throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${id}.`);
  return view(rows[0]);
}

export async function addCredit(db: Db, accountId: string, amountCents: number, reason: string | null) {
  return transaction(db, async (tx) => {
    // Guarded: a balance stays a safe integer (migrations/007 makes it a constraint too).
    const { rows } = await tx.query(
      `UPDATE accounts SET balance_cents = balance_cents + $2 WHERE id = $1 AND balance_cents <= $3::bigint - $2::bigint RETURNING balance_cents`,
      [accountId, amountCents, MAX_BALANCE_CENTS]);
    if (!rows[0]) {
      await getAccount(tx, accountId); // ACCOUNT_NOT_FOUND when there is none
      throw new ApiError('INVALID_INPUT', `The credit would take the balance past ${MAX_BALANCE_CENTS} cents.`,
        [{ field: 'amountCents', message: `would take the balance past ${MAX_BALANCE_CENTS}` }]);
    }
    const entryId = newId('led');
    await tx.query(
      `INSERT INTO ledger_entries (id, account_id, kind, amount_cents, reason) VALUES ($1, $2, 'credit', $3, $4)`,
      [entryId, accountId, amountCents, reason]);
    return { entryId, balanceCents: rows[0].balance_cents as number };
  });
}

export interface LedgerEntry { id: string; kind: string; amountCents: number; generationId?: string; reason?: string; createdAt: string }

export async function listLedger(db: Db, accountId: string, limit: number, cursor: string | null): Promise<Page<LedgerEntry>> {
  await getAccount(db, accountId);
  const after = cursor === null ? null : decodeCursor(cursor);
  const { rows } = await db.query(
    `SELECT id, kind, amount_cents, generation_id, reason, created_at FROM ledger_entries
     WHERE account_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
    [accountId, after, limit + 1]);
  const data = rows.slice(0, limit).map((r) => ({
    id: r.id, kind: r.kind, amountCents: r.amount_cents,
    ...(r.generation_id ? { generationId: r.generation_id } : {}),
    ...(r.reason ? { reason: r.reason } : {}),
    createdAt: (r.created_at as Date).toISOString(),
  }));
  return { data, nextCursor: rows.length > limit ? encodeCursor(data[data.length - 1].id) : null };
}

/** An account named by its id or its email (the operator's `--account`). */
export async function resolveAccount(db: Queryable, idOrEmail: string): Promise<AccountView> {
  if (isId('acct', idOrEmail)) return getAccount(db, idOrEmail);
  const row = idOrEmail.includes('@') ? await accountByEmail(db, idOrEmail) : null;
  if (!row) throw new ApiError('ACCOUNT_NOT_FOUND', `No account with the id or email ${idOrEmail}.`);
  return view(row as unknown as Record<string, unknown>);
}

/** Accounts newest first: all, those with this exact email, or those matching `query` (part of an email, or an id). */
export async function listAccounts(db: Queryable, opts: { query?: string; email?: string; limit: number; cursor: string | null }): Promise<Page<AccountView>> {
  if (opts.email !== undefined) {
    const row = await accountByEmail(db, opts.email);
    return { data: row ? [view(row as unknown as Record<string, unknown>)] : [], nextCursor: null };
  }
  const rows = await searchAccounts(db, {
    text: opts.query || null, beforeId: opts.cursor === null ? null : decodeCursor(opts.cursor), limit: opts.limit + 1,
  });
  const data = rows.slice(0, opts.limit).map((r) => view(r as unknown as Record<string, unknown>));
  return { data, nextCursor: rows.length > opts.limit ? encodeCursor(data[data.length - 1].id) : null };
}
