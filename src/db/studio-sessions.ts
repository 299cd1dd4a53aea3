// The statements on `studio_sessions` (migrations/011). Ids are stored as their SHA-256 only.
import type { Queryable } from './pool.ts';

/** A new session; a console session (no account) carries the hash its admin token binds it to. */
export async function insertSession(
  q: Queryable,
  idHash: Buffer,
  accountId: string | null,
  seconds: number,
  adminTokenHash: Buffer | null = null,
): Promise<void> {
  await q.query(
    `INSERT INTO studio_sessions (id_hash, account_id, expires_at, admin_token_hash)
     VALUES ($1, $2, now() + make_interval(secs => $3), $4)`,
    [idHash, accountId, seconds, adminTokenHash],
  );
}

/** Ends the oldest live sessions of the account (null: of the console) beyond the newest `keep`. */
export async function revokeSessionsBeyond(
  q: Queryable,
  accountId: string | null,
  keep: number,
): Promise<void> {
  // Two statements rather than IS NOT DISTINCT FROM, which the index on account_id cannot serve.
  const owner = accountId === null ? 'account_id IS NULL' : 'account_id = $2';
  await q.query(
    `UPDATE studio_sessions SET revoked_at = now() WHERE id_hash IN (
       SELECT id_hash FROM studio_sessions WHERE ${owner} AND revoked_at IS NULL AND expires_at > now()
       ORDER BY created_at DESC, id_hash OFFSET $1)`,
    accountId === null ? [keep] : [keep, accountId],
  );
}

export interface SessionRow {
  account_id: string | null;
  last_seen_at: Date;
  email: string | null;
  balance_cents: number | null;
  admin_token_hash: Buffer | null;
}

/**
 * The statement of liveSession(), $1 the id's hash and $2 the idle limit in seconds: also the first step
 * of a page's statement that reads the session and the page in one round trip (db/generations-history.ts).
 */
export const LIVE_SESSION = `SELECT s.account_id, s.last_seen_at, s.admin_token_hash, a.email, a.balance_cents
  FROM studio_sessions s LEFT JOIN accounts a ON a.id = s.account_id
  WHERE s.id_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
    AND s.last_seen_at > now() - make_interval(secs => $2)`;

/**
 * The live session of `idHash` (not revoked, not past its end, seen within `idleSeconds`), with its
 * account.
 */
export async function liveSession(
  q: Queryable,
  idHash: Buffer,
  idleSeconds: number,
): Promise<SessionRow | null> {
  const { rows } = await q.query({
    name: 'studio-session',
    text: LIVE_SESSION,
    values: [idHash, idleSeconds],
  });
  return (rows[0] as SessionRow | undefined) ?? null;
}

/**
 * last_seen_at set to now, unless it was set within `freshSeconds`: of several requests that saw the
 * same stale row, the first writes and the others (re-checking the row it committed) write nothing.
 */
export async function touchSession(
  q: Queryable,
  idHash: Buffer,
  freshSeconds: number,
): Promise<void> {
  await q.query(
    `UPDATE studio_sessions SET last_seen_at = now()
      WHERE id_hash = $1 AND last_seen_at < now() - make_interval(secs => $2)`,
    [idHash, freshSeconds],
  );
}

export async function revokeSession(q: Queryable, idHash: Buffer): Promise<void> {
  await q.query(
    'UPDATE studio_sessions SET revoked_at = now() WHERE id_hash = $1 AND revoked_at IS NULL',
    [idHash],
  );
}

export async function revokeSessionsOf(q: Queryable, accountId: string): Promise<void> {
  await q.query(
    'UPDATE studio_sessions SET revoked_at = now() WHERE account_id = $1 AND revoked_at IS NULL',
    [accountId],
  );
}

/**
 * Removes sessions that ended a day ago or more (signed out, past their end, or idle: two days
 * without a request is past any idle limit), at most 5,000 a call.
 */
export async function pruneEndedSessions(q: Queryable): Promise<void> {
  await q.query(
    `DELETE FROM studio_sessions WHERE ctid = ANY(ARRAY(SELECT ctid FROM studio_sessions
       WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'
          OR last_seen_at < now() - interval '2 days' LIMIT 5000))`,
  );
}
