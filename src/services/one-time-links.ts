// One-time links: an invitation to set a first password, a password reset, or a sign-in. The link carries 32 random
// bytes; the table keeps their SHA-256. Using one marks it used in the same guarded statement that
// checks it, so a link works once, even when clicked twice at the same moment. Links void each other:
// issuing one voids the account's earlier unused links; using one, or changing the password, voids all
// (voided links are marked used). An invitation never replaces a password set after it was issued.
// A link is a person's (migrations/030); it also names the account they are taken to.
import crypto from 'node:crypto';
import type { Db, Queryable } from '../db/pool.ts';
import {
  insertToken,
  liveTokenOwner,
  useTokenRow,
  voidTokensOf,
  type TokenOwner,
} from '../db/studio-tokens.ts';

/** `signin`: the link mailed past the per-email ceiling of wrong passwords (migrations/035). */
export type Purpose = 'invite' | 'reset' | 'signin';
export const TOKEN_TTL_S: Record<Purpose, number> = {
  invite: 7 * 24 * 3600,
  reset: 3600,
  signin: 15 * 60,
};

const sha = (s: string) => crypto.createHash('sha256').update(s).digest();

/** A new link to `accountId`, for `personId` (null: the account's owner, who signed up with it). */
export async function issueToken(
  db: Queryable,
  accountId: string,
  purpose: Purpose,
  ttlSeconds = TOKEN_TTL_S[purpose],
  personId: string | null = null,
): Promise<string> {
  const token = crypto.randomBytes(32).toString('base64url');
  await insertToken(db, sha(token), personId, accountId, purpose, ttlSeconds);
  return token;
}

/** Voids every unused link of the person (a link was used, or the password changed). */
export async function voidLinks(db: Queryable, personId: string): Promise<void> {
  await voidTokensOf(db, personId);
}

/** The person and account of a live, unused link (without using it): for showing the form. */
export async function peekToken(
  db: Db,
  token: string,
  purpose: Purpose,
): Promise<TokenOwner | null> {
  if (token.length > 100) return null;
  return liveTokenOwner(db, sha(token), purpose);
}

/** Uses the link: its person and account, or null if it is unknown, used or expired. */
export async function useToken(
  db: Queryable,
  token: string,
  purpose: Purpose,
): Promise<TokenOwner | null> {
  if (token.length > 100) return null;
  return useTokenRow(db, sha(token), purpose);
}

export function linkFor(publicUrl: string, purpose: Purpose, token: string): string {
  return `${publicUrl}/${purpose === 'signin' ? 'signin-link' : purpose}/${token}`;
}
