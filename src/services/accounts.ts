// Accounts and their money history. The balance changes only together with a ledger entry, in one
// transaction; the CHECK on accounts.balance_cents makes a negative balance impossible.
import { ApiError } from '../domain/errors.ts';
import type { Db, Queryable } from '../db/pool.ts';
import { credit } from './ledger.ts';
import { newId } from '../domain/ids.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';

export { MAX_BALANCE_CENTS } from './ledger.ts';

export interface AccountView {
  id: string; email: string; name: string | null; balanceCents: number; createdAt: string;
  /** Owed after a reversal found too little (docs/billing.md); present only when above 0. */
  shortfallCents?: number;
}

const view = (r: Record<string, unknown>): AccountView => ({
  id: r.id as string, email: r.email as string, name: (r.name as string | null) ?? null,
  balanceCents: r.balance_cents as number, createdAt: (r.created_at as Date).toISOString(),
  ...((r.shortfall_cents as number) > 0 ? { shortfallCents: r.shortfall_cents as number } : {}),
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

/** An operator's credit (src/services/ledger.ts: it also pays off a shortfall first). */
export async function addCredit(db: Db, accountId: string, amountCents: number, reason: string | null) {
  return credit(db, { accountId, amountCents, reason });
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
