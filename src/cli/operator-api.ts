// The operator's commands (accounts, credits, keys, generations) over one interface with two homes:
// the local installation (its data dir or DATABASE_URL; local-operator.ts) and a running server's
// admin API (RENDERGATE_URL; remote-operator.ts). The commands themselves are written once, here.
import type { AccountView } from '../services/accounts.ts';
import type { Page } from '../services/paging.ts';
import type { Link } from '../services/invites.ts';
import type { Member } from '../services/members.ts';
import { CliError, UsageError } from './cli-error.ts';
import { MAX_KEY_RATE_PER_MINUTE } from '../domain/limits.ts';

export interface NewKeyOptions {
  name?: string;
  dailyCapCents: number | null;
  rateLimitPerMinute?: number;
  mode?: 'live' | 'test';
}

export interface OperatorApi {
  listAccounts(opts: {
    query?: string;
    limit?: number;
    cursor?: string;
  }): Promise<Page<AccountView>>;
  /** The account named by id or email; ACCOUNT_NOT_FOUND otherwise. */
  account(idOrEmail: string): Promise<AccountView>;
  createAccount(email: string, name: string | null): Promise<AccountView>;
  invite(email: string, name: string | null): Promise<Link>;
  resetLink(email: string): Promise<Link>;
  addCredit(accountId: string, amountCents: number, reason: string | null): Promise<unknown>;
  createKey(accountId: string, opts: NewKeyOptions): Promise<unknown>;
  revokeKey(keyId: string): Promise<unknown>;
  refund(generationId: string): Promise<unknown>;
  listMembers(accountId: string): Promise<{ data: Member[] }>;
  addMember(accountId: string, email: string, role: string): Promise<unknown>;
  setMemberRole(accountId: string, userId: string, role: string): Promise<unknown>;
  removeMember(accountId: string, userId: string, revokeKeys: boolean): Promise<unknown>;
  close(): Promise<void>;
}

function intFlag(
  flags: Map<string, string>,
  name: string,
  opts: { min: number; max: number },
): number | undefined {
  const v = flags.get(name);
  if (v === undefined) return undefined;
  if (!/^\d{1,16}$/.test(v) || Number(v) < opts.min || Number(v) > opts.max) {
    throw new UsageError(`--${name} must be a whole number from ${opts.min} to ${opts.max}`);
  }
  return Number(v);
}

/** Runs one operator command; its result is printed as JSON. */
export async function runOperatorCommand(
  name: string,
  flags: Map<string, string>,
  positionals: string[],
  api: OperatorApi,
): Promise<unknown> {
  const need = (flag: string): string => {
    const v = flags.get(flag);
    if (v === undefined || v === '') throw new UsageError(`--${flag} is required`);
    return v;
  };
  const limit = () => intFlag(flags, 'limit', { min: 1, max: 100 });
  switch (name) {
    case 'accounts list':
      return api.listAccounts({ limit: limit(), cursor: flags.get('cursor') });
    case 'accounts find':
      return api.listAccounts({ query: positionals[0], limit: limit() });
    case 'accounts create':
      return api.createAccount(need('email'), flags.get('name') ?? null);
    case 'accounts invite':
      return api.invite(need('email'), flags.get('name') ?? null);
    case 'accounts reset-link':
      return api.resetLink(need('email'));
    case 'credits add': {
      const amount = intFlag(flags, 'amount', { min: 1, max: Number.MAX_SAFE_INTEGER });
      if (amount === undefined) throw new UsageError('--amount is required');
      const account = await api.account(need('account'));
      return api.addCredit(account.id, amount, flags.get('reason') ?? null);
    }
    case 'keys create': {
      const mode = flags.get('mode');
      if (mode !== undefined && mode !== 'live' && mode !== 'test')
        throw new UsageError('--mode must be live or test');
      const cap =
        flags.get('daily-cap') === 'none'
          ? null
          : (intFlag(flags, 'daily-cap', { min: 0, max: Number.MAX_SAFE_INTEGER }) ?? null);
      const rate = intFlag(flags, 'rate-limit', { min: 1, max: MAX_KEY_RATE_PER_MINUTE });
      const account = await api.account(need('account'));
      return api.createKey(account.id, {
        name: flags.get('name'),
        dailyCapCents: cap,
        rateLimitPerMinute: rate,
        mode,
      });
    }
    case 'keys revoke':
      return api.revokeKey(need('key'));
    case 'generations refund':
      return api.refund(need('id'));
    case 'members list':
      return api.listMembers((await api.account(need('account'))).id);
    case 'members add':
      return api.addMember((await api.account(need('account'))).id, need('email'), need('role'));
    case 'members role':
    case 'members remove': {
      const account = (await api.account(need('account'))).id;
      // a member named by email: found among the account's members
      const user = need('user');
      const userId = user.includes('@')
        ? (await api.listMembers(account)).data.find(
            (m) => m.email.toLowerCase() === user.toLowerCase(),
          )?.userId
        : user;
      if (!userId) throw new CliError(`no member ${user} in account ${account}`);
      if (name === 'members role') return api.setMemberRole(account, userId, need('role'));
      return api.removeMember(account, userId, flags.get('revoke-keys') === 'true');
    }
    default:
      throw new Error(`not an operator command: ${name}`);
  }
}
