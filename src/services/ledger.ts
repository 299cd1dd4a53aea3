// The ledger: every change of an account's balance goes through this module, each paired with its
// ledger entry in one transaction, and the CHECK on accounts.balance_cents makes a negative balance
// impossible. The kinds of change:
//   charge  a create (charge()): the SQL function rendergate_create_generations (migrations/006, 011)
//           takes the cost, writes the 'charge' entry and the generation in one statement, batched by
//           create-batch.ts;
//   refund  a queued render cancelled, failed or past its deadline, or a succeeded one refunded by the
//           operator (refund()): one guarded transition, the unique (generation_id, kind) index makes a
//           second refund impossible;
//   credit  the operator adds money (credit()).
// A new kind (a top-up, a reversal) is one more function here, beside these: its guarded balance
// statement in db/accounts.ts, its entry through db/ledger.ts insertEntry (and its kind in LedgerKind and
// the column's CHECK, by a new migration).
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { transaction, type Db, type Tx } from '../db/pool.ts';
import { accountById, addToBalance, returnToBalance } from '../db/accounts.ts';
import { entriesOf, insertEntry } from '../db/ledger.ts';
import { takeBack } from '../db/key-day-usage.ts';
import { refundTransition, type RefundReason } from '../db/generations-attempt.ts';
import type { Lease } from '../db/lease.ts';
import { CreateBatcher, type CreateItem, type CreateOutcome } from './create-batch.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';

export type { RefundReason };

/** The largest balance an account can hold: 2^53 - 1, the largest integer a JSON client reads exactly. */
export const MAX_BALANCE_CENTS = Number.MAX_SAFE_INTEGER;

export interface LedgerEntry {
  id: string; kind: string; amountCents: number; generationId?: string; reason?: string; createdAt: string;
}

const noAccount = (id: string) => new ApiError('ACCOUNT_NOT_FOUND', `No account ${id}.`);

/**
 * Refund: moves a generation from `from` to a refunded final status and returns its charge; the cents
 * returned, or null (nothing changed) when it is no longer in `from` (or, with `lease`, when that
 * attempt no longer holds it: the failure of a superseded attempt changes nothing).
 */
export async function refund(tx: Tx, id: string, from: 'queued' | 'succeeded', reason: RefundReason,
  lease?: Lease): Promise<number | null> {
  const g = await refundTransition(tx, id, from, reason, lease);
  if (!g) return null;
  if (g.cost_cents > 0) {
    // The balance before the day usage, the order a batch of creates takes these rows in
    // (migrations/006): no deadlock between them.
    await returnToBalance(tx, g.account_id, g.cost_cents);
    if (g.key_id && g.usage_day) await takeBack(tx, g.key_id, g.usage_day, g.cost_cents);
    await insertEntry(tx, { id: newId('led'), accountId: g.account_id, kind: 'refund', amountCents: g.cost_cents, generationId: id });
  }
  return g.cost_cents;
}

/** Credit: the operator adds `amountCents`; the balance stays a safe integer (migrations/007 too). */
export async function credit(db: Db, accountId: string, amountCents: number, reason: string | null) {
  return transaction(db, async (tx) => {
    const balanceCents = await addToBalance(tx, accountId, amountCents, MAX_BALANCE_CENTS);
    if (balanceCents === null) {
      if (!await accountById(tx, accountId)) throw noAccount(accountId);
      throw new ApiError('INVALID_INPUT', `The credit would take the balance past ${MAX_BALANCE_CENTS} cents.`,
        [{ field: 'amountCents', message: `would take the balance past ${MAX_BALANCE_CENTS}` }]);
    }
    const entryId = newId('led');
    await insertEntry(tx, { id: entryId, accountId, kind: 'credit', amountCents, reason });
    return { entryId, balanceCents };
  });
}

/** The account's entries, newest first, a page at a time. */
export async function history(db: Db, accountId: string, limit: number, cursor: string | null): Promise<Page<LedgerEntry>> {
  if (!await accountById(db, accountId)) throw noAccount(accountId);
  const after = cursor === null ? null : decodeCursor(cursor);
  const rows = await entriesOf(db, accountId, after, limit + 1);
  const data = rows.slice(0, limit).map((r) => ({
    id: r.id, kind: r.kind, amountCents: r.amount_cents,
    ...(r.generation_id ? { generationId: r.generation_id } : {}),
    ...(r.reason ? { reason: r.reason } : {}),
    createdAt: r.created_at.toISOString(),
  }));
  return { data, nextCursor: rows.length > limit ? encodeCursor(data[data.length - 1].id) : null };
}

/** The ledger of one database: what the services and (through their options) the queue are given. */
export class Ledger {
  private batcher: CreateBatcher;

  constructor(private db: Db, timeZone: string) {
    this.batcher = new CreateBatcher(db, timeZone);
  }

  /** Charge: the create of a render, batched with the creates arriving meanwhile (create-batch.ts). */
  charge(item: CreateItem): Promise<CreateOutcome> {
    return this.batcher.submit(item);
  }

  refund(tx: Tx, id: string, from: 'queued' | 'succeeded', reason: RefundReason, lease?: Lease): Promise<number | null> {
    return refund(tx, id, from, reason, lease);
  }

  credit(accountId: string, amountCents: number, reason: string | null) {
    return credit(this.db, accountId, amountCents, reason);
  }

  history(accountId: string, limit: number, cursor: string | null): Promise<Page<LedgerEntry>> {
    return history(this.db, accountId, limit, cursor);
  }
}
