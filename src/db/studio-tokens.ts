// The statements on `studio_tokens` (migrations/011): one-time links, stored as their SHA-256 only.
import type { Queryable } from './pool.ts';

/**
 * A new link; the account's earlier unused links are voided (marked used) by the same statement.
 */
export async function insertToken(
  q: Queryable,
  hash: Buffer,
  accountId: string,
  purpose: string,
  seconds: number,
): Promise<void> {
  await q.query(
    `WITH voided AS (UPDATE studio_tokens SET used_at = now() WHERE account_id = $2 AND used_at IS NULL)
     INSERT INTO studio_tokens (token_hash, account_id, purpose, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
    [hash, accountId, purpose, seconds],
  );
}

/** Voids every unused link of the account (a link was used, or the password changed). */
export async function voidTokensOf(q: Queryable, accountId: string): Promise<void> {
  await q.query(
    'UPDATE studio_tokens SET used_at = now() WHERE account_id = $1 AND used_at IS NULL',
    [accountId],
  );
}

/** A live link: unused, unexpired, and for an invitation, no password set since it was issued. */
const LIVE = `t.token_hash = $1 AND t.purpose = $2 AND t.used_at IS NULL AND t.expires_at > now()
  AND (t.purpose <> 'invite' OR NOT EXISTS (
    SELECT 1 FROM studio_passwords p WHERE p.account_id = t.account_id AND p.updated_at >= t.created_at))`;

/** The account of a live token, without using it. */
export async function liveTokenAccount(
  q: Queryable,
  hash: Buffer,
  purpose: string,
): Promise<string | null> {
  const { rows } = await q.query<{ account_id: string }>(
    `SELECT t.account_id FROM studio_tokens t WHERE ${LIVE}`,
    [hash, purpose],
  );
  return rows[0]?.account_id ?? null;
}

/** Uses a live token (once, in the statement that checks it): its account, or null. */
export async function useTokenRow(
  q: Queryable,
  hash: Buffer,
  purpose: string,
): Promise<string | null> {
  const { rows } = await q.query<{ account_id: string }>(
    `UPDATE studio_tokens t SET used_at = now() WHERE ${LIVE} RETURNING t.account_id`,
    [hash, purpose],
  );
  return rows[0]?.account_id ?? null;
}

export async function pruneEndedTokens(q: Queryable): Promise<void> {
  await q.query(
    `DELETE FROM studio_tokens WHERE ctid = ANY(ARRAY(SELECT ctid FROM studio_tokens
       WHERE expires_at < now() - interval '1 day' OR used_at < now() - interval '1 day'
       LIMIT 5000))`,
  );
}
