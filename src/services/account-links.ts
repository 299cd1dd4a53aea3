// The operator's one-time links (CLI `rendergate accounts invite` / `accounts reset-link`, and the
// console): an invitation creates the account if it does not exist yet; both print a link to set a
// password, valid once until it expires.
import { transaction, type Db } from '../db/pool.ts';
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { EMAIL } from '../domain/email.ts';
import { issueToken, linkFor, TOKEN_TTL_S, type Purpose } from './link-tokens.ts';

export interface Link { accountId: string; email: string; purpose: Purpose; link: string; expiresAt: string }

export async function inviteLink(db: Db, publicUrl: string, email: string, name: string | null = null): Promise<Link> {
  if (!EMAIL.test(email) || email.length > 254) throw new ApiError('INVALID_INPUT', 'email: not an email address.', [{ field: 'email', message: 'not an email address' }]);
  return transaction(db, async (tx) => {
    await tx.query('INSERT INTO accounts (id, email, name) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [newId('acct'), email, name]);
    const { rows } = await tx.query('SELECT id, email FROM accounts WHERE lower(email) = lower($1)', [email]);
    const token = await issueToken(tx, rows[0].id, 'invite');
    return { accountId: rows[0].id, email: rows[0].email, purpose: 'invite' as const, link: linkFor(publicUrl, 'invite', token), expiresAt: new Date(Date.now() + TOKEN_TTL_S.invite * 1000).toISOString() };
  });
}

export async function resetLink(db: Db, publicUrl: string, email: string): Promise<Link> {
  const { rows } = await db.query('SELECT id, email FROM accounts WHERE lower(email) = lower($1)', [email]);
  if (!rows[0]) throw new ApiError('ACCOUNT_NOT_FOUND', `No account with the email ${email}.`);
  const token = await issueToken(db, rows[0].id, 'reset');
  return { accountId: rows[0].id, email: rows[0].email, purpose: 'reset', link: linkFor(publicUrl, 'reset', token), expiresAt: new Date(Date.now() + TOKEN_TTL_S.reset * 1000).toISOString() };
}
