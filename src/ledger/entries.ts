// The statements on `ledger_entries`: written only by this folder, each beside the balance change
// it records, in the same transaction (a charge's by rendergate_create_generations,
// sql/create_generations .sql); read for the account's history.
import type { Queryable } from '../db/pool.ts';

/** The kinds of entry (the column's CHECK, migrations/001 and 014). */
export type LedgerKind = 'charge' | 'refund' | 'credit' | 'reversal';

export interface NewEntry {
  id: string;
  accountId: string;
  kind: LedgerKind;
  amountCents: number;
  generationId?: string | null;
  reason?: string | null;
}

export async function insertEntry(q: Queryable, e: NewEntry): Promise<void> {
  await q.query(
    `INSERT INTO ledger_entries (id, account_id, kind, amount_cents, generation_id, reason)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [e.id, e.accountId, e.kind, e.amountCents, e.generationId ?? null, e.reason ?? null],
  );
}

export interface EntryRow {
  id: string;
  kind: string;
  amount_cents: number;
  generation_id: string | null;
  reason: string | null;
  created_at: Date;
}

/** The columns of EntryRow. */
const ENTRY_COLUMNS = 'id, kind, amount_cents, generation_id, reason, created_at';

/**
 * The account's ($1) newest `limit` entries as a JSON array of EntryRow (created_at a JSON
 * timestamp), for a statement that reads more. The limit is written into the text: with it a
 * parameter, PostgreSQL plans the statement again at every call (a tenth of a millisecond).
 */
export function newestEntriesJsonSql(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`bad limit ${limit}`);
  return `(SELECT coalesce(json_agg(e), '[]') FROM (SELECT ${ENTRY_COLUMNS} FROM ledger_entries
      WHERE account_id = $1 ORDER BY id DESC LIMIT ${limit}) e)`;
}

/** Up to `limit` entries of the account older than `after` (an entry id), newest first. */
export async function entriesOf(
  q: Queryable,
  accountId: string,
  after: string | null,
  limit: number,
): Promise<EntryRow[]> {
  // Named, so each connection plans it once; two statements rather than `$2 IS NULL OR id < $2`,
  // whose plan made once for any cursor could not use the index's bound.
  const columns = ENTRY_COLUMNS;
  const { rows } =
    after === null
      ? await q.query({
          name: 'ledger-entries-first',
          text: `SELECT ${columns} FROM ledger_entries WHERE account_id = $1
                  ORDER BY id DESC LIMIT $2`,
          values: [accountId, limit],
        })
      : await q.query({
          name: 'ledger-entries-after',
          text: `SELECT ${columns} FROM ledger_entries WHERE account_id = $1 AND id < $2
                  ORDER BY id DESC LIMIT $3`,
          values: [accountId, after, limit],
        });
  return rows as EntryRow[];
}
