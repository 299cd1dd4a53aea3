// The operator's one-time links (CLI `rendergate accounts invite` / `accounts reset-link`, and the
// console): an invitation creates the account if it does not exist yet; both print a link to set a
// password, valid once until it expires.
import { transaction, type Db } from '../db/pool.ts';
import { accountByEmail, insertAccount } from '../db/accounts.ts';
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { EMAIL } from './passwords.ts';
import { issueToken, linkFor, TOKEN_TTL_S, type Purpose } from './one-time-links.ts';

export interface Link {
  accountId: string;
  email: string;
  purpose: Purpose;
  link: string;
  expiresAt: string;
}

export async function inviteLink(
  db: Db,
  publicUrl: string,
  email: string,
  name: string | null = null,
): Promise<Link> {
  if (!EMAIL.test(email) || email.length > 254)
    throw new ApiError('INVALID_INPUT', 'email: not an email address.', [
      { field: 'email', message: 'not an email address' },
    ]);
  // The same bound as the admin API's account name.
  if (name !== null && name.length > 200)
    throw new ApiError('INVALID_INPUT', 'name: at most 200 characters.', [
      { field: 'name', message: 'at most 200 characters' },
    ]);
  return transaction(db, async (tx) => {
    await insertAccount(tx, newId('acct'), email, name);
    const account = (await accountByEmail(tx, email))!;
    const token = await issueToken(tx, account.id, 'invite');
    return {
      accountId: account.id,
      email: account.email,
      purpose: 'invite' as const,
      link: linkFor(publicUrl, 'invite', token),
      expiresAt: new Date(Date.now() + TOKEN_TTL_S.invite * 1000).toISOString(),
    };
  });
}

export async function resetLink(db: Db, publicUrl: string, email: string): Promise<Link> {
  const account = await accountByEmail(db, email);
  if (!account) throw new ApiError('ACCOUNT_NOT_FOUND', `No account with the email ${email}.`);
  const token = await issueToken(db, account.id, 'reset');
  return {
    accountId: account.id,
    email: account.email,
    purpose: 'reset',
    link: linkFor(publicUrl, 'reset', token),
    expiresAt: new Date(Date.now() + TOKEN_TTL_S.reset * 1000).toISOString(),
  };
}
