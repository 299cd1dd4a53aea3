// The statements on `studio_sessions` (migrations/011). Ids are stored as their SHA-256 only.
import type { Queryable } from './pool.ts';

export async function insertSession(q: Queryable, idHash: Buffer, accountId: string | null, seconds: number): Promise<void> {
  await q.query(
    'INSERT INTO studio_sessions (id_hash, account_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))',
    [idHash, accountId, seconds]);
}

export interface SessionRow { account_id: string | null; last_seen_at: Date; email: string | null; balance_cents: number | null }

/** The live session of `idHash` (not revoked, not past its end, seen within `idleSeconds`), with its account. */
export async function liveSession(q: Queryable, idHash: Buffer, idleSeconds: number): Promise<SessionRow | null> {
  const { rows } = await q.query({ name: 'studio-session',
    text: `SELECT s.account_id, s.last_seen_at, a.email, a.balance_cents
           FROM studio_sessions s LEFT JOIN accounts a ON a.id = s.account_id
           WHERE s.id_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
             AND s.last_seen_at > now() - make_interval(secs => $2)`, values: [idHash, idleSeconds] });
  return (rows[0] as SessionRow | undefined) ?? null;
}

export async function touchSession(q: Queryable, idHash: Buffer): Promise<void> {
  await q.query('UPDATE studio_sessions SET last_seen_at = now() WHERE id_hash = $1', [idHash]);
}

export async function revokeSession(q: Queryable, idHash: Buffer): Promise<void> {
  await q.query('UPDATE studio_sessions SET revoked_at = now() WHERE id_hash = $1 AND revoked_at IS NULL', [idHash]);
}

export async function revokeSessionsOf(q: Queryable, accountId: string): Promise<void> {
  await q.query('UPDATE studio_sessions SET revoked_at = now() WHERE account_id = $1 AND revoked_at IS NULL', [accountId]);
}
