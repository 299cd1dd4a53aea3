// The ledger: every change of an account's balance goes through this module, each paired with its
// ledger entry in one transaction, and the CHECK on accounts.balance_cents makes a negative balance
// impossible. The kinds of change:
//   charge  a create (charge()): the SQL function rendergate_create_generations (migrations/006, 011)
//           takes the cost, writes the 'charge' entry and the generation in one statement, batched by
//           create-batch.ts;
//   refund  a queued render cancelled, failed or past its deadline, or a succeeded one refunded by the
//           operator (refund()): one guarded transition, the unique (generation_id, kind) index makes a
//           second refund impossible;
//   credit  the operator adds money (credit()), or a Stripe top-up (creditIn(): services/stripe-events.ts);
//           a credit pays off the account's shortfall first;
//   reversal a top-up refunded or disputed at Stripe, or its payment failed (reverseIn()): what
//           the balance holds, the rest recorded as the account's shortfall (docs/billing.md); a
//           won dispute gives its part back as a `credit` (reinstateIn()).
// Renders of test keys (migrations/014) move no money: their charge is never taken, their refund gives
// back only the key's day.
// A new kind (a top-up, a reversal) is one more function here, beside these: its guarded balance
// statement in db/accounts.ts, its entry through db/ledger.ts insertEntry (and its kind in LedgerKind and
// the column's CHECK, by a new migration).
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { transaction, type Db, type Tx } from '../db/pool.ts';
import { accountById, returnToBalance } from '../db/accounts.ts';
import {
  creditAccount,
  entriesOf,
  insertEntry,
  reverseAccount,
  type ReversalResult,
} from '../db/ledger.ts';
import { takeBack } from '../db/key-day-usage.ts';
import { refundTransition, type RefundReason } from '../db/generations-attempt.ts';
import type { Lease } from '../db/lease.ts';
import { CreateBatcher, type CreateItem, type CreateOutcome } from './create-batch.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';

export type { RefundReason };

/** The largest balance an account can hold: 2^53 - 1, the largest integer a JSON client reads exactly. */
export const MAX_BALANCE_CENTS = Number.MAX_SAFE_INTEGER;

export interface LedgerEntry {
  id: string;
  kind: string;
  amountCents: number;
  generationId?: string;
  reason?: string;
  createdAt: string;
}

const noAccount = (id: string) => new ApiError('ACCOUNT_NOT_FOUND', `No account ${id}.`);

/**
 * Refund: moves a generation from `from` to a refunded final status and returns its charge; the cents
 * returned, or null (nothing changed) when it is no longer in `from` (or, with `lease`, when that
 * attempt no longer holds it: the failure of a superseded attempt changes nothing).
 */
export async function refund(
  tx: Tx,
  id: string,
  from: 'queued' | 'succeeded',
  reason: RefundReason,
  lease?: Lease,
): Promise<number | null> {
  const g = await refundTransition(tx, id, from, reason, lease);
  if (!g) return null;
  const live = g.mode !== 'test'; // a test render was never charged: only its key's day is given back
  if (g.cost_cents > 0) {
    // The balance before the day usage, the order a batch of creates takes these rows in
    // (migrations/006): no deadlock between them.
    if (live) await returnToBalance(tx, g.account_id, g.cost_cents);
    if (g.key_id && g.usage_day) await takeBack(tx, g.key_id, g.usage_day, g.cost_cents);
    if (live)
      await insertEntry(tx, {
        id: newId('led'),
        accountId: g.account_id,
        kind: 'refund',
        amountCents: g.cost_cents,
        generationId: id,
      });
  }
  return live ? g.cost_cents : 0;
}

/** Credit: the operator adds `amountCents`; the balance stays a safe integer (migrations/007 too). */
export async function credit(
  db: Db,
  accountId: string,
  amountCents: number,
  reason: string | null,
) {
  return transaction(db, (tx) => creditIn(tx, { accountId, amountCents, reason }));
}

export interface Credited {
  entryId: string;
  balanceCents: number;
}

/** A credit inside `tx` (a shortfall is paid first); ACCOUNT_NOT_FOUND, or INVALID_INPUT past the largest balance. */
export async function creditIn(
  tx: Tx,
  o: { accountId: string; amountCents: number; reason: string | null; entryId?: string },
): Promise<Credited> {
  const r = await creditAccount(tx, o);
  if (r.ok) return { entryId: r.entryId, balanceCents: r.balanceCents };
  if (r.reason === 'no_account') throw noAccount(o.accountId);
  throw new ApiError(
    'INVALID_INPUT',
    `The credit would take the balance past ${MAX_BALANCE_CENTS} cents.`,
    [{ field: 'amountCents', message: `would take the balance past ${MAX_BALANCE_CENTS}` }],
  );
}

/**
 * Reinstatement inside `tx`: a won dispute's money comes back (services/stripe-settle.ts). A
 * credit, the kind clients know, so it pays a shortfall first like any credit; its reason names
 * the dispute.
 */
export function reinstateIn(
  tx: Tx,
  o: { accountId: string; amountCents: number; disputeId: string },
): Promise<Credited> {
  return creditIn(tx, {
    accountId: o.accountId,
    amountCents: o.amountCents,
    reason: `Stripe dispute won ${o.disputeId}`,
  });
}

/** Reversal inside `tx`: takes what the balance holds, the rest recorded as the account's shortfall. */
export async function reverseIn(
  tx: Tx,
  o: { accountId: string; amountCents: number; reason: string },
): Promise<ReversalResult> {
  const r = await reverseAccount(tx, o);
  if (!r) throw noAccount(o.accountId);
  return r;
}

/** The account's entries, newest first, a page at a time. */
export async function history(
  db: Db,
  accountId: string,
  limit: number,
  cursor: string | null,
): Promise<Page<LedgerEntry>> {
  if (!(await accountById(db, accountId))) throw noAccount(accountId);
  const after = cursor === null ? null : decodeCursor(cursor);
  const rows = await entriesOf(db, accountId, after, limit + 1);
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

/** The ledger of one database: what the services and (through their options) the queue are given. */
export class Ledger {
  private batcher: CreateBatcher;

  constructor(
    private db: Db,
    timeZone: string,
  ) {
    this.batcher = new CreateBatcher(db, timeZone);
  }

  /**
   * Charge: the create of a render, batched with the creates arriving meanwhile (create-batch.ts); one
   * with a chat request's messages (/openai/v1) goes alone, its messages written in the same statement.
   */
  charge(item: CreateItem, messages?: unknown[]): Promise<CreateOutcome> {
    return messages ? this.batcher.submitWithMessages(item, messages) : this.batcher.submit(item);
  }

  refund(
    tx: Tx,
    id: string,
    from: 'queued' | 'succeeded',
    reason: RefundReason,
    lease?: Lease,
  ): Promise<number | null> {
    return refund(tx, id, from, reason, lease);
  }

  credit(accountId: string, amountCents: number, reason: string | null) {
    return credit(this.db, accountId, amountCents, reason);
  }

  history(accountId: string, limit: number, cursor: string | null): Promise<Page<LedgerEntry>> {
    return history(this.db, accountId, limit, cursor);
  }
}
