// The statements on `studio_sessions` (migrations/011, 030). Ids are stored as their SHA-256 only. A
// session is a person's (person_id), in one account at a time (account_id; null: the console's).
import type { Role } from '../domain/principal.ts';
import type { Queryable } from './pool.ts';

/**
 * A new session of a person in an account; a console session (no person, no account) carries the
 * hash its admin token binds it to.
 */
export async function insertSession(
  q: Queryable,
  idHash: Buffer,
  who: { personId: string; accountId: string } | null,
  seconds: number,
  adminTokenHash: Buffer | null = null,
): Promise<void> {
  await q.query(
    `INSERT INTO studio_sessions (id_hash, person_id, account_id, expires_at, admin_token_hash)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4), $5)`,
    [idHash, who?.personId ?? null, who?.accountId ?? null, seconds, adminTokenHash],
  );
}

/** Moves a live session of a person to another account of theirs; false when not a member. */
export async function switchSession(
  q: Queryable,
  idHash: Buffer,
  accountId: string,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE studio_sessions s SET account_id = $2 WHERE s.id_hash = $1 AND s.revoked_at IS NULL
        AND EXISTS (SELECT 1 FROM memberships m WHERE m.account_id = $2 AND m.person_id = s.person_id)`,
    [idHash, accountId],
  );
  return rowCount === 1;
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
  person_id: string | null;
  last_seen_at: Date;
  /** When it ends whatever the activity. */
  expires_at: Date;
  /** The person's email. */
  email: string | null;
  balance_cents: number | null;
  /** The account's name (null: it has none). */
  account_name: string | null;
  admin_token_hash: Buffer | null;
  /** The person's role in the account. */
  role: Role | null;
  /** The person's accounts, [id, name or email] each, when they are in more than one. */
  accounts: [string, string][] | null;
  /** The account requires a second factor and the person has none (migrations/035). */
  needs_factor: boolean | null;
}

/** The columns of LIVE_SESSION, for a statement that selects them again from it. */
export const SESSION_COLUMNS =
  's.account_id, s.person_id, s.last_seen_at, s.expires_at, s.admin_token_hash, s.email, ' +
  's.balance_cents, ' +
  's.role, s.accounts, s.needs_factor, s.account_name';

/**
 * The statement of liveSession(), $1 the id's hash and $2 the idle limit in seconds: also the first step
 * of a page's statement that reads the session and the page in one round trip (db/generations-history.ts).
 * The person's role comes with it (a member no more has no live session in that account), and their
 * accounts for the switcher, read only when they have more than one: the person's row, read for the
 * email, says how many (account_count, kept by a trigger: migrations/038), so a person in one account
 * costs no further read.
 */
export const LIVE_SESSION = `SELECT s.account_id, s.person_id, s.last_seen_at, s.expires_at,
    s.admin_token_hash,
    p.email, a.balance_cents, a.name AS account_name, m.role,
    (a.two_factor_required AND p.totp_secret IS NULL) AS needs_factor,
    CASE WHEN p.account_count > 1
      THEN (SELECT json_agg(json_build_array(x.id, COALESCE(x.name, x.email)) ORDER BY x.id)
              FROM memberships y JOIN accounts x ON x.id = y.account_id
             WHERE y.person_id = s.person_id) END AS accounts
  FROM studio_sessions s LEFT JOIN accounts a ON a.id = s.account_id
    LEFT JOIN people p ON p.id = s.person_id
    LEFT JOIN memberships m ON m.account_id = s.account_id AND m.person_id = s.person_id
  WHERE s.id_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
    AND s.last_seen_at > now() - make_interval(secs => $2)
    AND (s.account_id IS NULL OR m.role IS NOT NULL)`;

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

/** Ends every session of a person (sign out everywhere, a new password). */
export async function revokeSessionsOfPerson(q: Queryable, personId: string): Promise<void> {
  await q.query(
    'UPDATE studio_sessions SET revoked_at = now() WHERE person_id = $1 AND revoked_at IS NULL',
    [personId],
  );
}

/** Ends a person's sessions in one account (they were removed from it, or left). */
export async function revokeSessionsOfMember(
  q: Queryable,
  accountId: string,
  personId: string,
): Promise<void> {
  await q.query(
    `UPDATE studio_sessions SET revoked_at = now()
      WHERE account_id = $1 AND person_id = $2 AND revoked_at IS NULL`,
    [accountId, personId],
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
