// The ledger: the only writer of balances, ledger entries and spend counters (each key's day and
// the budgets' periods: budgets.ts, spend.ts). Every movement of money is one named operation here, its balance change and its
// entry in one transaction, and the CHECKs on accounts make a negative balance impossible:
//   charge       a live create: price, balance, day cap, budgets and idempotency in the batched SQL
//                function (sql/create_generations.sql through create-batch.ts), with a 'charge'
//                entry, and any alert it crosses (alerts.ts) in the same transaction;
//   test record  a test key's create: the same call, counted against the key's day only, no money;
//   refund       a render's price given back, whole or in part (refund.ts); a test render's takes
//                back only its day;
//   credit       the operator's credit or a Stripe top-up, paying a shortfall first (credit.ts);
//   reversal     a top-up refunded or disputed at Stripe, what the balance lacks left as a
//                shortfall.
// A new movement (a reinstatement, an auto-recharge) is one more operation here, beside these: its
// guarded statements in this folder, its entry through entries.ts (its kind in LedgerKind and in
// the column's CHECK, by a migration). The queue and the services call these; nothing else writes
// money.
import { transaction, type Db, type Tx } from '../db/pool.ts';
import type { Lease } from '../db/lease.ts';
import { newId } from '../domain/ids.ts';
import { CreateBatcher, type CreateItem, type CreateOutcome } from './create-batch.ts';
import { creditIn, reverseIn, type Credited } from './credit.ts';
import { refundIn, refundPartIn, type RefundReason } from './refund.ts';

export { creditIn, reinstateIn, reverseIn, MAX_BALANCE_CENTS, type Credited } from './credit.ts';
export type { ReversalResult } from './credit.ts';
export { refundIn, refundPartIn, type RefundReason } from './refund.ts';
export type { CreateOutcome } from './create-batch.ts';
export { entriesOf, type EntryRow } from './entries.ts';
export { accountStatement, type AccountStatement } from './statement.ts';

/** A live create, as charge() takes it (the ledger names its own entry). */
export type ChargeItem = Omit<CreateItem, 'ledgerId' | 'mode' | 'short' | 'testResult'>;
/** A test key's create, as recordTest() takes it. */
export type TestItem = Omit<CreateItem, 'ledgerId' | 'mode'>;

/** The ledger of one database: what the services and the queue are given. */
export class Ledger {
  private batcher: CreateBatcher;

  constructor(
    private db: Db,
    timeZone: string,
  ) {
    this.batcher = new CreateBatcher(db, timeZone);
  }

  /**
   * Charge: the create of a live render, batched with the creates arriving meanwhile; one with a
   * chat request's messages (/openai/v1) goes alone, its messages (and output format) written in
   * the same statement.
   */
  charge(item: ChargeItem, messages?: unknown[], responseFormat?: object): Promise<CreateOutcome> {
    return this.submit({ ...item, ledgerId: newId('led'), mode: 'live' }, messages, responseFormat);
  }

  /** Test record: the create of a test key's render, counted against its key's day, no money. */
  recordTest(
    item: TestItem,
    messages?: unknown[],
    responseFormat?: object,
  ): Promise<CreateOutcome> {
    return this.submit({ ...item, ledgerId: newId('led'), mode: 'test' }, messages, responseFormat);
  }

  private submit(
    item: CreateItem,
    messages?: unknown[],
    responseFormat?: object,
  ): Promise<CreateOutcome> {
    return messages
      ? this.batcher.submitWithMessages(item, messages, responseFormat)
      : this.batcher.submit(item);
  }

  /**
   * Refund of the whole price, in a transaction of its own (refund.ts refundIn): the cents
   * returned, or null when nothing changed.
   */
  refund(
    id: string,
    from: 'queued' | 'succeeded',
    reason: RefundReason,
    lease?: Lease,
  ): Promise<number | null> {
    return transaction(this.db, (tx) => refundIn(tx, id, from, reason, lease));
  }

  /** refund() inside the caller's transaction (a cancel, under the row's lock). */
  refundIn(
    tx: Tx,
    id: string,
    from: 'queued' | 'succeeded',
    reason: RefundReason,
  ): Promise<number | null> {
    return refundIn(tx, id, from, reason);
  }

  /** Refund of part of a succeeded render's price (refund.ts refundPartIn); null when refused. */
  refundPart(id: string, amountCents: number, reason: string | null = null) {
    return transaction(this.db, (tx) => refundPartIn(tx, id, amountCents, reason));
  }

  /** Credit: the operator adds `amountCents` (credit.ts creditIn). */
  credit(accountId: string, amountCents: number, reason: string | null): Promise<Credited> {
    return credit(this.db, accountId, amountCents, reason);
  }

  /** Reversal in a transaction of its own (credit.ts reverseIn). */
  reverse(accountId: string, amountCents: number, reason: string) {
    return transaction(this.db, (tx) => reverseIn(tx, { accountId, amountCents, reason }));
  }
}

/** The operator's credit, in a transaction of its own, for callers without a Ledger (the CLI). */
export function credit(db: Db, accountId: string, amountCents: number, reason: string | null) {
  return transaction(db, (tx) => creditIn(tx, { accountId, amountCents, reason }));
}
