// Why a create was refused (the create function answers only "refused"): read back for the message.
import type { Db } from '../db/pool.ts';
import { ApiError } from '../domain/errors.ts';
import { balanceAndShortfall } from '../db/accounts.ts';
import { spentToday } from '../db/key-day-usage.ts';

/**
 * A short balance (402) comes before a reached cap (409), as the contract orders them. A live render is
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
  o: { key: Refused; cost: number; short: boolean },
): Promise<ApiError> {
  const { key, cost, short } = o;
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
  // Without a key only the balance can refuse (a balance that moved back since is still the reason).
  if (short || (key.mode !== 'test' && balance < cost) || key.id === null) {
    return new ApiError(
      'INSUFFICIENT_BALANCE',
      `This render costs ${cost} cents and the balance is ${balance} cents.`,
      [{ costCents: cost, balanceCents: balance }],
    );
  }
  const day = await spentToday(db, key.id, timeZone);
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
