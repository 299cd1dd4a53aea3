// The statements on `studio_tokens` (migrations/011, 030): one-time links of a person (an
// invitation to set a first password, a reset), stored as their SHA-256 only. `account_id` is the
// account the person had then (the previous release reads it); `person_id` is whose link it is.
import type { Queryable } from './pool.ts';

/**
 * A new link for the person (null: the account's owner, set by the table's trigger); their earlier
 * unused links are voided (marked used) by the same statement.
 */
export async function insertToken(
  q: Queryable,
  hash: Buffer,
  personId: string | null,
  accountId: string,
  purpose: string,
  seconds: number,
): Promise<void> {
  await q.query(
    `WITH voided AS (UPDATE studio_tokens SET used_at = now() WHERE used_at IS NULL
       AND person_id = COALESCE($2, (SELECT person_id FROM memberships
         WHERE account_id = $3 AND role = 'owner' ORDER BY joined_at LIMIT 1)))
     INSERT INTO studio_tokens (token_hash, person_id, account_id, purpose, expires_at)
     VALUES ($1, $2::text, $3, $4, now() + make_interval(secs => $5))`,
    [hash, personId, accountId, purpose, seconds],
  );
}

/** Voids every unused link of the person (a link was used, or the password changed). */
export async function voidTokensOf(q: Queryable, personId: string): Promise<void> {
  await q.query(
    'UPDATE studio_tokens SET used_at = now() WHERE person_id = $1 AND used_at IS NULL',
    [personId],
  );
}

/** A live link: unused, unexpired, and for an invitation, no password set since it was issued. */
const LIVE = `t.token_hash = $1 AND t.purpose = $2 AND t.used_at IS NULL AND t.expires_at > now()
  AND (t.purpose <> 'invite' OR NOT EXISTS (
    SELECT 1 FROM people p WHERE p.id = t.person_id AND p.password_updated_at >= t.created_at))`;

export interface TokenOwner {
  personId: string;
  accountId: string;
}

const owner = (r: { person_id: string; account_id: string } | undefined): TokenOwner | null =>
  r ? { personId: r.person_id, accountId: r.account_id } : null;

/** The person (and account) of a live token, without using it. */
export async function liveTokenOwner(
  q: Queryable,
  hash: Buffer,
  purpose: string,
): Promise<TokenOwner | null> {
  const { rows } = await q.query<{ person_id: string; account_id: string }>(
    `SELECT t.person_id, t.account_id FROM studio_tokens t WHERE ${LIVE}`,
    [hash, purpose],
  );
  return owner(rows[0]);
}

/** Uses a live token (once, in the statement that checks it): its person and account, or null. */
export async function useTokenRow(
  q: Queryable,
  hash: Buffer,
  purpose: string,
): Promise<TokenOwner | null> {
  const { rows } = await q.query<{ person_id: string; account_id: string }>(
    `UPDATE studio_tokens t SET used_at = now() WHERE ${LIVE} RETURNING t.person_id, t.account_id`,
    [hash, purpose],
  );
  return owner(rows[0]);
}

export async function pruneEndedTokens(q: Queryable): Promise<void> {
  await q.query(
    `DELETE FROM studio_tokens WHERE ctid = ANY(ARRAY(SELECT ctid FROM studio_tokens
       WHERE expires_at < now() - interval '1 day' OR used_at < now() - interval '1 day'
       LIMIT 5000))`,
  );
}
