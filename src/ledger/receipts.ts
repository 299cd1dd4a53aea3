// Receipts and credit notes (migrations/037): numbered by the trigger of sql/number_receipt.sql
// in the transaction of each credit and reversal, so the ledger owns them; read here for the
// studio's list and the PDF.
import type { Queryable, Tx } from '../db/pool.ts';

export interface ReceiptRow {
  number: string;
  series: 'R' | 'CN';
  accountId: string;
  entryId: string;
  amountCents: number;
  reason: string | null;
  receiptUrl: string | null;
  createdAt: Date;
}

interface DbRow {
  number: string;
  series: 'R' | 'CN';
  account_id: string;
  entry_id: string;
  amount_cents: number;
  reason: string | null;
  receipt_url: string | null;
  created_at: Date;
}

/** The columns of DbRow. */
const COLUMNS =
  'number, series, account_id, entry_id, amount_cents, reason, receipt_url, created_at';

const view = (r: DbRow): ReceiptRow => ({
  number: r.number,
  series: r.series,
  accountId: r.account_id,
  entryId: r.entry_id,
  amountCents: r.amount_cents,
  reason: r.reason,
  receiptUrl: r.receipt_url,
  createdAt: r.created_at,
});

/** The account's ($1) receipts, the newest first. */
const NEWEST_FIRST =
  'FROM receipts WHERE account_id = $1 ORDER BY created_at DESC, series, seq DESC';

/** The account's ($1) newest receipts as a JSON array, for a statement reading more. */
export const NEWEST_RECEIPTS_JSON_SQL = `(SELECT coalesce(json_agg(r), '[]') FROM (SELECT ${COLUMNS}
    ${NEWEST_FIRST} LIMIT 100) r)`;

/** Rows of NEWEST_RECEIPTS_JSON_SQL, their created_at a JSON timestamp. */
export function receiptsOfJson(rows: (Omit<DbRow, 'created_at'> & { created_at: string })[]) {
  return rows.map((r) => view({ ...r, created_at: new Date(r.created_at) }));
}

/** The account's receipts and credit notes, newest first. */
export async function receiptsOf(
  q: Queryable,
  accountId: string,
  limit = 100,
): Promise<ReceiptRow[]> {
  // Named (planned once a connection), with its columns listed: a prepared `SELECT *` fails once a
  // migration adds a column while the process runs.
  const { rows } = await q.query<DbRow>({
    name: 'receipts-of-account',
    text: `SELECT ${COLUMNS} ${NEWEST_FIRST} LIMIT $2`,
    values: [accountId, limit],
  });
  return rows.map(view);
}

/** One receipt of the account; null when there is none of that number there. */
export async function receiptOf(
  q: Queryable,
  accountId: string,
  number: string,
): Promise<ReceiptRow | null> {
  const { rows } = await q.query<DbRow>(
    'SELECT * FROM receipts WHERE account_id = $1 AND number = $2',
    [accountId, number],
  );
  return rows[0] ? view(rows[0]) : null;
}

/** Stripe's own receipt page of the payment behind a credit, linked from ours. */
export async function linkStripeReceipt(tx: Tx, entryId: string, url: string): Promise<void> {
  await tx.query('UPDATE receipts SET receipt_url = $2 WHERE entry_id = $1', [entryId, url]);
}

/**
 * The receipt of the credit a Stripe payment made (its top-up: a Checkout Session's or an
 * auto-recharge's), when it has no link to Stripe's receipt yet; null when there is none such.
 */
export async function unlinkedReceiptOfPayment(
  q: Queryable,
  paymentIntent: string,
): Promise<string | null> {
  const { rows } = await q.query<{ entry_id: string }>(
    `SELECT r.entry_id FROM topups t JOIN receipts r ON r.entry_id = t.credit_entry_id
      WHERE t.payment_intent = $1 AND r.receipt_url IS NULL`,
    [paymentIntent],
  );
  return rows[0]?.entry_id ?? null;
}

/** Links Stripe's receipt page to a credit's receipt once; a link already there stays. */
export async function linkStripeReceiptOnce(
  q: Queryable,
  entryId: string,
  url: string,
): Promise<void> {
  await q.query(
    'UPDATE receipts SET receipt_url = $2 WHERE entry_id = $1 AND receipt_url IS NULL',
    [entryId, url],
  );
}
