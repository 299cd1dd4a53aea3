// Accounts, and what the operator API, the studio and GET /me read of them, their ledger's history
// included. Their money moves only through the ledger (src/ledger/).
import { ApiError } from '../domain/errors.ts';
import type { Db, Queryable } from '../db/pool.ts';
import { isId, newId } from '../domain/ids.ts';
import {
  accountById,
  accountExists,
  accountRowByEmail,
  insertAccount,
  pageAccounts,
  type AccountRow,
} from '../db/accounts.ts';
import { spentToday } from '../db/key-day-usage.ts';
import { spendOf } from '../db/generations.ts';
import { entriesOf, type EntryRow } from '../ledger/ledger.ts';
import { addCredit } from './operator-credit.ts';
import type { AuditSource } from '../audit/record.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';
import { inviteLink, resetLink } from './invites.ts';
import { accountFor, authorize } from '../domain/authorize.ts';
import { renameOwnAccount } from './account-name.ts';
import type { KeyPrincipal, Principal } from '../domain/principal.ts';

export { MAX_BALANCE_CENTS } from '../ledger/ledger.ts';

export interface LedgerEntry {
  id: string;
  kind: string;
  amountCents: number;
  generationId?: string;
  reason?: string;
  createdAt: string;
}

export interface AccountView {
  id: string;
  email: string;
  name: string | null;
  balanceCents: number;
  createdAt: string;
  /** Owed after a reversal found too little (docs/billing.md); present only when above 0. */
  shortfallCents?: number;
  /** The low-balance alert's threshold (docs/billing.md "Alerts"); null: none. */
  lowBalanceCents: number | null;
}

const view = (r: AccountRow): AccountView => ({
  id: r.id,
  email: r.email,
  name: r.name ?? null,
  balanceCents: r.balance_cents,
  createdAt: r.created_at.toISOString(),
  ...(r.shortfall_cents ? { shortfallCents: r.shortfall_cents } : {}),
  lowBalanceCents: r.low_balance_cents ?? null,
});

export async function createAccount(
  db: Db,
  email: string,
  name: string | null,
): Promise<AccountView> {
  const row = await insertAccount(db, newId('acct'), email, name);
  if (!row)
    throw new ApiError('INVALID_INPUT', 'An account with this email already exists.', [
      { field: 'email', message: 'already in use' },
    ]);
  return view(row);
}

export async function getAccount(db: Queryable, id: string): Promise<AccountView> {
  const row = await accountById(db, id);
  if (!row) throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${id}.`);
  return view(row);
}

/** The operator's credit, audited (operator-credit.ts). */
export { addCredit } from './operator-credit.ts';

/** The account's ledger entries, newest first, a page at a time. */
export async function listLedger(
  db: Queryable,
  accountId: string,
  limit: number,
  cursor: string | null,
): Promise<Page<LedgerEntry>> {
  const after = cursor === null ? null : decodeCursor(cursor);
  const rows = await entriesOf(db, accountId, after, limit + 1);
  // An account with entries exists: only an empty page asks whether it does.
  if (rows.length === 0 && !(await accountExists(db, accountId)))
    throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${accountId}.`);
  return ledgerPage(rows, limit);
}

/** A page of `limit` entries from `rows` (up to limit + 1 of them: one more says there are more). */
export function ledgerPage(rows: EntryRow[], limit: number): Page<LedgerEntry> {
  const data = rows.slice(0, limit).map((r) => ({
    id: r.id,
    kind: r.kind,
    amountCents: r.amount_cents,
    ...(r.generation_id ? { generationId: r.generation_id } : {}),
    ...(r.reason ? { reason: r.reason } : {}),
    createdAt: r.created_at.toISOString(),
  }));
  return { data, nextCursor: rows.length > limit ? encodeCursor(data[data.length - 1].id) : null };
}

export interface SpendRow {
  label: string;
  renders: number;
  spentCents: number;
}

/** Accounts as the HTTP routes and the studio use them: the database stays in this layer. */
export class Accounts {
  constructor(private db: Db) {}

  async create(p: Principal, email: string, name: string | null) {
    authorize(p, 'accounts.administer');
    return createAccount(this.db, email, name);
  }

  /** The principal's account, or for the operator the one named. */
  async get(p: Principal, account?: string) {
    return getAccount(this.db, accountFor(p, 'ledger.view', account));
  }

  async list(
    p: Principal,
    opts: { query?: string; email?: string; limit: number; cursor: string | null },
  ) {
    authorize(p, 'accounts.administer');
    return listAccounts(this.db, opts);
  }

  /** A one-time link to set a first password (creates the account); links start with `publicUrl`. */
  async invite(p: Principal, publicUrl: string, email: string, name: string | null) {
    authorize(p, 'accounts.administer');
    return inviteLink(this.db, publicUrl, email, name);
  }

  async resetLink(p: Principal, publicUrl: string, email: string) {
    authorize(p, 'accounts.administer');
    return resetLink(this.db, publicUrl, email);
  }

  /** The operator's credit of an account (a member adds credit through Stripe: topups.ts). */
  async credit(
    p: Principal,
    id: string,
    amountCents: number,
    reason: string | null,
    src?: AuditSource,
  ) {
    authorize(p, 'accounts.administer');
    return addCredit(this.db, id, amountCents, reason, { by: p, src });
  }

  /** Renames the principal's account (an owner's; audited as `account.renamed`): its new name. */
  async rename(p: Principal, name: string, src: AuditSource): Promise<string | null> {
    return renameOwnAccount(this.db, p, name, src);
  }

  /** The principal's account's ledger, or for the operator the one named. */
  async ledger(
    p: Principal,
    limit: number,
    cursor: string | null,
    account?: string,
  ): Promise<Page<LedgerEntry>> {
    return listLedger(this.db, accountFor(p, 'ledger.view', account), limit, cursor);
  }

  /** What the key has spent today (charges minus refunds), and when today ends in the cap's zone. */
  async dayUsage(p: KeyPrincipal, timeZone: string) {
    authorize(p, 'usage.view');
    return spentToday(this.db, p.keyId, timeZone);
  }

  /** Spend of renders created in [from, to), per key (the studio is "Studio") and per model. */
  async spend(
    p: Principal,
    from: Date,
    to: Date,
  ): Promise<{ byKey: SpendRow[]; byModel: SpendRow[] }> {
    const s = await spendOf(this.db, accountFor(p, 'usage.view'), from, to);
    const v = (r: { label: string; renders: number; spent: number }) => ({
      label: r.label,
      renders: r.renders,
      spentCents: r.spent,
    });
    return { byKey: s.byKey.map(v), byModel: s.byModel.map(v) };
  }
}

/** An account named by its id or its email (the operator's `--account`). */
export async function resolveAccount(db: Queryable, idOrEmail: string): Promise<AccountView> {
  if (isId('acct', idOrEmail)) return getAccount(db, idOrEmail);
  const row = idOrEmail.includes('@') ? await accountRowByEmail(db, idOrEmail) : null;
  if (!row)
    throw new ApiError('ACCOUNT_NOT_FOUND', `No account with the id or email ${idOrEmail}.`);
  return view(row);
}

/** Accounts newest first: all, the one with this exact email, or those matching `query` (part of an email, or an id). */
export async function listAccounts(
  db: Queryable,
  opts: { query?: string; email?: string; limit: number; cursor: string | null },
): Promise<Page<AccountView>> {
  if (opts.email !== undefined) {
    const row = await accountRowByEmail(db, opts.email);
    return { data: row ? [view(row)] : [], nextCursor: null };
  }
  const rows = await pageAccounts(db, {
    text: opts.query || null,
    beforeId: opts.cursor === null ? null : decodeCursor(opts.cursor),
    limit: opts.limit + 1,
  });
  const data = rows.slice(0, opts.limit).map(view);
  return {
    data,
    nextCursor: rows.length > opts.limit ? encodeCursor(data[data.length - 1].id) : null,
  };
}
