// Why a create was refused (the create function answers only "refused", with the budgets it would
// exceed when those refused it): a short balance and a reached cap read back for the message.
import type { Db } from '../db/pool.ts';
import { ApiError } from '../domain/errors.ts';
import { balanceAndShortfall } from '../db/accounts.ts';
import { spentToday } from '../db/key-day-usage.ts';

/** One budget a charge would exceed: the BUDGET_EXCEEDED detail (docs/api.md "Budgets"). */
export interface BudgetOver {
  scope: 'account' | 'member' | 'key';
  id: string;
  period: 'day' | 'week' | 'month' | 'total';
  limitCents: number;
  spentCents: number;
  costCents: number;
  resetsAt: string | null;
}

/** The budgets a refused create's row names (its `inputs`: { budgets }), or none. */
export function budgetsOver(inputs: unknown): BudgetOver[] {
  const b = (inputs as { budgets?: unknown } | null)?.budgets;
  if (!Array.isArray(b)) return [];
  return (b as BudgetOver[]).map((x) => ({
    ...x,
    resetsAt: x.resetsAt === null ? null : new Date(x.resetsAt).toISOString(),
  }));
}

/**
 * A short balance (402) comes before a reached cap (409), then the budgets (409), as the contract
 * orders them. A live render is
 * also refused (402) while the account owes a shortfall; a test render is refused for its balance only
 * when its input asks for it (`short`: docs/api.md "Test keys").
 */
/** Who was refused (services/generation-create.ts Payer). */
interface Refused {
  accountId: string;
  id: string | null;
  dailyCapCents: number | null;
  mode?: 'live' | 'test';
}

export async function refusal(
  db: Db,
  timeZone: string,
  o: { key: Refused; cost: number; short: boolean; budgets?: BudgetOver[] },
): Promise<ApiError> {
  const { key, cost, short } = o;
  const budgets = o.budgets ?? [];
  const acct = await balanceAndShortfall(db, key.accountId);
  const balance = acct?.balanceCents ?? 0;
  const owed = key.mode === 'test' ? 0 : (acct?.shortfallCents ?? 0);
  if (owed > 0 && !short) {
    return new ApiError(
      'INSUFFICIENT_BALANCE',
      `The account owes ${owed} cents after a reversed top-up; ` +
        'add credit to start renders again.',
      [{ costCents: cost, balanceCents: balance }],
    );
  }
  // Without a key or a budget only the balance can refuse (a balance that moved back since is
  // still the reason).
  if (short || (key.mode !== 'test' && balance < cost) || (key.id === null && !budgets.length)) {
    return new ApiError(
      'INSUFFICIENT_BALANCE',
      `This render costs ${cost} cents and the balance is ${balance} cents.`,
      [{ costCents: cost, balanceCents: balance }],
    );
  }
  const day = key.id === null ? null : await spentToday(db, key.id, timeZone);
  const capped = key.dailyCapCents !== null && day !== null && day.spent + cost > key.dailyCapCents;
  if (budgets.length > 0 && !capped) {
    const names = budgets.map((b) => `the ${b.scope}'s ${b.period} budget (${b.limitCents} cents)`);
    return new ApiError(
      'BUDGET_EXCEEDED',
      `This render costs ${cost} cents and would exceed ${names.join(', ')}.`,
      budgets,
    );
  }
  if (day === null) throw new Error('a refusal without a key, a short balance or a budget');
  return new ApiError(
    'API_KEY_DAILY_CAP',
    `This key's daily cap of ${key.dailyCapCents} cents would be exceeded.`,
    [
      {
        capCents: key.dailyCapCents,
        spentTodayCents: day.spent,
        costCents: cost,
        resetsAt: day.resetsAt.toISOString(),
      },
    ],
  );
}
