// Budgets and the low-balance alert as the operator API, GET /v1/me and the studio use them (docs/
// billing.md "Budgets", "Alerts"): who may set which (authorize.ts: the account's and members' for
// owners, admins and billing members, a key's also for the developer who created it), the subject
// checked to belong to the account, and each change audited in its transaction. The ledger
// (src/ledger/budgets.ts, alerts.ts) holds the rows and counts the spend.
import { recordAudit, NO_SOURCE, type AuditSource } from '../audit/record.ts';
import { accountOfKey, creatorOfKey } from '../db/api-keys.ts';
import { memberOf } from '../db/memberships.ts';
import { transaction, type Db } from '../db/pool.ts';
import { accountFor, authorize, type Action } from '../domain/authorize.ts';
import { ApiError } from '../domain/errors.ts';
import type { KeyPrincipal, Principal } from '../domain/principal.ts';
import {
  accountBudgets,
  budgetsOf,
  budgetsPanelOf,
  removeBudgetIn,
  setBudgetIn,
  type BudgetScope,
  type BudgetSubject,
  type BudgetView,
  type Period,
} from '../ledger/budgets.ts';
import { setLowBalanceIn } from '../ledger/alerts.ts';

export {
  PERIODS,
  type BudgetView,
  type BudgetsPanel,
  type Period,
  type BudgetScope,
} from '../ledger/budgets.ts';

/** A budget's owner as a caller names it: the account, one member (a person) or one key. */
export type Whose =
  | { scope: 'account'; account?: string }
  | { scope: 'member'; account?: string; personId: string }
  | { scope: 'key'; keyId: string; account?: string };

const ACTION: Record<BudgetScope, Action> = {
  account: 'budgets.account',
  member: 'budgets.member',
  key: 'budgets.key',
};

export class Budgets {
  constructor(
    private db: Db,
    private timeZone: string,
  ) {}

  /**
   * The subject named by `w`, checked to exist in the account `p` acts in (the operator: the key's
   * own account, or the one named); `change`: authorized to change its budgets, else to see them.
   */
  private async subject(p: Principal, w: Whose, change: boolean): Promise<BudgetSubject> {
    const named = w.scope === 'key' ? (w.account ?? (await this.keyAccount(w.keyId))) : w.account;
    const accountId = accountFor(p, 'usage.view', named);
    if (w.scope === 'account') {
      if (change) authorize(p, ACTION.account);
      return { accountId, scope: 'account', subjectId: accountId };
    }
    if (w.scope === 'member') {
      if (!(await memberOf(this.db, accountId, w.personId)))
        throw new ApiError('NOT_FOUND', `No member ${w.personId} in this account.`);
      if (change) authorize(p, ACTION.member);
      return { accountId, scope: 'member', subjectId: w.personId };
    }
    const key = await creatorOfKey(this.db, accountId, w.keyId);
    if (!key) throw new ApiError('KEY_NOT_FOUND', `No key ${w.keyId} in this account.`);
    if (change) authorize(p, ACTION.key, { createdBy: key.created_by });
    return { accountId, scope: 'key', subjectId: w.keyId };
  }

  private async keyAccount(keyId: string): Promise<string> {
    const a = await accountOfKey(this.db, keyId);
    if (!a) throw new ApiError('KEY_NOT_FOUND', `No key ${keyId}.`);
    return a;
  }

  /** The budgets of `w`, each spent of its limit in its current period. */
  async list(p: Principal, w: Whose): Promise<BudgetView[]> {
    return budgetsOf(this.db, await this.subject(p, w, false), this.timeZone);
  }

  /** Sets `w`'s budget of `period`; the budgets after it. */
  async set(
    p: Principal,
    w: Whose,
    period: Period,
    limitCents: number,
    src: AuditSource = NO_SOURCE,
  ): Promise<BudgetView[]> {
    const s = await this.subject(p, w, true);
    await transaction(this.db, async (tx) => {
      const done = await setBudgetIn(tx, s, period, limitCents, this.timeZone);
      if (!done) throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${s.accountId}.`);
      await this.audit(tx, p, s, src, { period, limitCents, previousCents: done.previous });
    });
    return budgetsOf(this.db, s, this.timeZone);
  }

  /** Removes `w`'s budget of `period` (none: NOT_FOUND); the budgets after it. */
  async remove(
    p: Principal,
    w: Whose,
    period: Period,
    src: AuditSource = NO_SOURCE,
  ): Promise<BudgetView[]> {
    const s = await this.subject(p, w, true);
    await transaction(this.db, async (tx) => {
      const previous = await removeBudgetIn(tx, s, period);
      if (previous === null) throw new ApiError('NOT_FOUND', `No ${period} budget to remove.`);
      await this.audit(tx, p, s, src, { period, limitCents: null, previousCents: previous });
    });
    return budgetsOf(this.db, s, this.timeZone);
  }

  private audit(
    tx: Parameters<typeof recordAudit>[0],
    p: Principal,
    s: BudgetSubject,
    src: AuditSource,
    details: Record<string, unknown>,
  ) {
    return recordAudit(tx, {
      account: s.accountId,
      action: 'budget.changed',
      actor: p,
      target: { type: s.scope === 'member' ? 'person' : s.scope, id: s.subjectId },
      ...src,
      details: { scope: s.scope, ...details },
    });
  }

  /** Every budget of the principal's account (the studio's Budgets). */
  async ofAccount(p: Principal) {
    return accountBudgets(this.db, accountFor(p, 'usage.view'), this.timeZone);
  }

  /**
   * The Usage page's budgets panel in one read: what budgets, keys, members and the account would
   * answer, under each one's permission.
   */
  async panel(p: Principal) {
    const accountId = accountFor(p, 'usage.view');
    // the members' list and the account's alert are read under their own permissions
    accountFor(p, 'renders.view');
    accountFor(p, 'ledger.view');
    const panel = await budgetsPanelOf(this.db, accountId, this.timeZone);
    if (!panel) throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${accountId}.`);
    return panel;
  }

  /** GET /v1/me's budgets: the key's account's and the key's own. */
  async ofKey(p: KeyPrincipal): Promise<{ account: BudgetView[]; key: BudgetView[] }> {
    const account = { accountId: p.account, scope: 'account' as const, subjectId: p.account };
    const key = { accountId: p.account, scope: 'key' as const, subjectId: p.keyId };
    const [a, k] = await Promise.all([
      budgetsOf(this.db, account, this.timeZone),
      budgetsOf(this.db, key, this.timeZone),
    ]);
    return { account: a, key: k };
  }

  /** Sets (null: removes) the account's low-balance alert, audited as `alert.changed`. */
  async setLowBalance(
    p: Principal,
    cents: number | null,
    opts: { account?: string; src?: AuditSource } = {},
  ): Promise<{ lowBalanceCents: number | null }> {
    const accountId = accountFor(p, 'lowBalanceAlert.manage', opts.account);
    await transaction(this.db, async (tx) => {
      const { previous } = await setLowBalanceIn(tx, accountId, cents);
      await recordAudit(tx, {
        account: accountId,
        action: 'alert.changed',
        actor: p,
        target: { type: 'account', id: accountId },
        ...(opts.src ?? NO_SOURCE),
        details: { alert: 'low_balance', thresholdCents: cents, previousCents: previous },
      });
    });
    return { lowBalanceCents: cents };
  }
}
