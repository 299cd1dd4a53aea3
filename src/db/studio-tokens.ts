// The statements on `studio_tokens` (migrations/011): one-time links, stored as their SHA-256 only.
import type { Queryable } from './pool.ts';

export async function insertToken(q: Queryable, hash: Buffer, accountId: string, purpose: string, seconds: number): Promise<void> {
  await q.query(
    `INSERT INTO studio_tokens (token_hash, account_id, purpose, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4))`, [hash, accountId, purpose, seconds]);
}

/** The account of a live, unused token, without using it. */
export async function liveTokenAccount(q: Queryable, hash: Buffer, purpose: string): Promise<string | null> {
  const { rows } = await q.query<{ account_id: string }>(
    `SELECT account_id FROM studio_tokens
     WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()`, [hash, purpose]);
  return rows[0]?.account_id ?? null;
}

/** Uses a live token (once, in the statement that checks it): its account, or null. */
export async function useTokenRow(q: Queryable, hash: Buffer, purpose: string): Promise<string | null> {
  const { rows } = await q.query<{ account_id: string }>(
    `UPDATE studio_tokens SET used_at = now()
     WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()
     RETURNING account_id`, [hash, purpose]);
  return rows[0]?.account_id ?? null;
}
