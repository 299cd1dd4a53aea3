// GET /v1/usage (docs/api.md "Usage"): what a key's account spent on renders over a range of days,
// grouped by day, model, key and member, in the key's mode (a test key sees its account's test usage).
import type { Db } from '../db/pool.ts';
import { accountById } from '../db/accounts.ts';
import {
  dailySpendByModel,
  spendStamp,
  usageRows,
  type DailyModelRow,
  type UsageColumn,
} from '../db/usage.ts';
import { parseUsageQuery, todayIn, type UsageGroup } from '../domain/usage-query.ts';
import { accountFor } from '../domain/authorize.ts';
import { modeOf, type Principal } from '../domain/principal.ts';
import { ApiError } from '../domain/errors.ts';
import { accountStatement } from '../ledger/ledger.ts';
import type { BudgetsPanel } from '../ledger/budgets.ts';
import { ledgerPage, type LedgerEntry } from './accounts.ts';
import type { Page } from './paging.ts';
import { receiptView, type ReceiptView } from './receipts.ts';

export interface UsageEntry {
  day?: string;
  modelId?: string;
  keyId?: string | null;
  /** Who started the renders: the studio's user (the account's email), null for a key's renders. */
  member?: string | null;
  renders: number;
  spentCents: number;
}

export interface UsageReport {
  from: string;
  to: string;
  data: UsageEntry[];
}

const COLUMN: Record<UsageGroup, UsageColumn> = {
  day: 'day',
  model: 'model',
  key: 'key',
  member: 'studio',
};

export class Usage {
  constructor(
    private readonly db: Db,
    private readonly timeZone: string,
  ) {}

  /**
   * The report for who asks (a key sees its own mode's renders, the studio live ones); the raw
   * query parameters are checked here (400 naming each).
   */
  async report(
    p: Principal,
    raw: { from?: string; to?: string; groupBy?: string },
    now = new Date(),
  ): Promise<UsageReport> {
    const accountId = accountFor(p, 'usage.view');
    const query = parseUsageQuery(raw, todayIn(this.timeZone, now));
    const byMember = query.groupBy.includes('member');
    const [rows, account] = await Promise.all([
      usageRows(this.db, {
        accountId,
        mode: modeOf(p),
        from: query.from,
        to: query.to,
        timeZone: this.timeZone,
        columns: query.groupBy.map((g) => COLUMN[g]),
      }),
      // Teams are not there yet: a studio render belongs to the account's one studio user.
      byMember ? accountById(this.db, accountId) : null,
    ]);
    const data = rows.map((r): UsageEntry => {
      const groups: Omit<UsageEntry, 'renders' | 'spentCents'> = {};
      for (const g of query.groupBy) {
        if (g === 'day') groups.day = r.day;
        else if (g === 'model') groups.modelId = r.model;
        else if (g === 'key') groups.keyId = r.key ?? null;
        else groups.member = r.studio ? (account?.email ?? null) : null;
      }
      return { ...groups, renders: r.renders, spentCents: r.spent };
    });
    return { from: query.from, to: query.to, data };
  }

  /**
   * Spend per model and day over the range (the studio's Usage chart): the report's day-and-model
   * grouping as one row per model with an array per day.
   */
  async dailyByModel(
    p: Principal,
    raw: { from?: string; to?: string },
    now = new Date(),
  ): Promise<{ from: string; to: string; models: DailyModelRow[] }> {
    const accountId = accountFor(p, 'usage.view');
    const { from, to } = parseUsageQuery(raw, todayIn(this.timeZone, now));
    const models = await dailySpendByModel(this.db, {
      accountId,
      mode: modeOf(p),
      from,
      to,
      timeZone: this.timeZone,
    });
    return { from, to, models };
  }

  /**
   * The studio's Usage page in one read: the stamp of its spend figures, the first page of `limit`
   * ledger entries, the receipts and the budgets panel, each under the permission its own read
   * asks (Accounts.ledger, Receipts.list, Budgets.panel).
   */
  async statement(
    p: Principal,
    limit: number,
  ): Promise<{
    stamp: string;
    ledger: Page<LedgerEntry>;
    receipts: ReceiptView[];
    budgets: BudgetsPanel;
  }> {
    const accountId = accountFor(p, 'ledger.view');
    for (const action of ['usage.view', 'receipts.view', 'renders.view'] as const)
      accountFor(p, action);
    const s = await accountStatement(this.db, accountId, this.timeZone, limit + 1);
    if (!s) throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${accountId}.`);
    return {
      stamp: s.stamp,
      ledger: ledgerPage(s.entries, limit),
      receipts: s.receipts.map(receiptView),
      budgets: s.budgets,
    };
  }

  /** What the account's spend figures depend on: the same stamp, the same figures (a page's cache). */
  stamp(p: Principal): Promise<string> {
    return spendStamp(this.db, accountFor(p, 'usage.view'));
  }
}
