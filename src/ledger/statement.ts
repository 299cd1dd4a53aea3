// The account's statement as the studio's Usage page shows it: its newest ledger entries, its
// receipts, its budgets panel and the stamp of its spend figures (db/usage.ts spendStamp), read in
// one statement and one snapshot. Apart they were five round trips, and a statement's round trip
// costs both processes more CPU than these reads themselves (docs/performance.md, the Usage page).
import type { Queryable } from '../db/pool.ts';
import { SPEND_STAMP_SQL } from '../db/usage.ts';
import {
  BUDGETS_PANEL_JSON_SQL,
  budgetsPanelOfJson,
  type BudgetsPanel,
  type PanelJson,
} from './budgets.ts';
import { newestEntriesJsonSql, type EntryRow } from './entries.ts';
import { NEWEST_RECEIPTS_JSON_SQL, receiptsOfJson, type ReceiptRow } from './receipts.ts';

export interface AccountStatement {
  /** What the spend figures depend on: spendStamp's. */
  stamp: string;
  /** The newest entries, up to the `entries` asked for. */
  entries: EntryRow[];
  receipts: ReceiptRow[];
  budgets: BudgetsPanel;
}

/** The texts by number of entries (each planned once a connection under its own name). */
const texts = new Map<number, string>();

function textFor(entries: number): string {
  let text = texts.get(entries);
  if (text === undefined) {
    text = `SELECT ${SPEND_STAMP_SQL} AS stamp, ${newestEntriesJsonSql(entries)} AS entries,
        ${NEWEST_RECEIPTS_JSON_SQL} AS receipts, ${BUDGETS_PANEL_JSON_SQL} AS budgets`;
    texts.set(entries, text);
  }
  return text;
}

/**
 * The statement of account `accountId` with its newest `entries` ledger entries (a small
 * constant: each number is a statement of its own), budgets in `timeZone`; null when there is no
 * such account.
 */
export async function accountStatement(
  q: Queryable,
  accountId: string,
  timeZone: string,
  entries: number,
): Promise<AccountStatement | null> {
  const { rows } = await q.query<{
    stamp: string;
    entries: (Omit<EntryRow, 'created_at'> & { created_at: string })[];
    receipts: Parameters<typeof receiptsOfJson>[0];
    budgets: PanelJson | null;
  }>({
    name: `account-statement-${entries}`,
    text: textFor(entries),
    values: [accountId, timeZone],
  });
  const r = rows[0];
  const budgets = budgetsPanelOfJson(r.budgets);
  if (budgets === null) return null;
  return {
    stamp: r.stamp,
    entries: r.entries.map((e) => ({ ...e, created_at: new Date(e.created_at) })),
    receipts: receiptsOfJson(r.receipts),
    budgets,
  };
}
