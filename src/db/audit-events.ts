// The statements on `audit_events` (migrations/031): appending to an account's chain under its lock,
// reading a page of it newest first, and walking it in order for `rendergate audit verify`.
import type { Queryable } from './pool.ts';

/** An event as stored; `at` is read back as the Date it was written from. */
export interface AuditRow {
  id: string;
  account_id: string;
  seq: number;
  at: Date;
  action: string;
  actor: { type: string; id: string | null; email?: string; name?: string };
  target: { type: string; id: string } | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

const COLUMNS =
  'id, account_id, seq, at, action, actor, target, ip, user_agent, details, prev_hash, hash';

/**
 * Takes the account's append lock for the rest of `q`'s transaction and reads the chain's head:
 * the last event's seq and hash, or null for an account without events. Every append goes through
 * here first, so concurrent writers of one account queue behind each other and each links to the
 * event committed before it (a transaction-scoped advisory lock, released at COMMIT or ROLLBACK).
 */
export async function lockAuditHead(
  q: Queryable,
  accountId: string,
): Promise<{ seq: number; hash: string } | null> {
  await q.query("SELECT pg_advisory_xact_lock(hashtextextended('audit:' || $1, 0))", [accountId]);
  const { rows } = await q.query(
    'SELECT seq, hash FROM audit_events WHERE account_id = $1 ORDER BY seq DESC LIMIT 1',
    [accountId],
  );
  return (rows[0] as { seq: number; hash: string } | undefined) ?? null;
}

export async function insertAuditEvent(q: Queryable, r: Omit<AuditRow, 'at'> & { at: string }) {
  await q.query(
    `INSERT INTO audit_events (${COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      r.id,
      r.account_id,
      r.seq,
      r.at,
      r.action,
      JSON.stringify(r.actor),
      r.target === null ? null : JSON.stringify(r.target),
      r.ip,
      r.user_agent,
      JSON.stringify(r.details),
      r.prev_hash,
      r.hash,
    ],
  );
}

export interface AuditFilter {
  accountId: string;
  /** Only this action. */
  action?: string;
  /** Only events whose actor has this id (a member's person id, a key's id). */
  actorId?: string;
  /** Events older than this event (the page cursor's id). */
  beforeId?: string;
  limit: number;
}

/** A page of an account's events, newest first (in chain order, not by clock). */
export async function pageAuditEvents(q: Queryable, f: AuditFilter): Promise<AuditRow[]> {
  const { rows } = await q.query(
    `SELECT ${COLUMNS} FROM audit_events
     WHERE account_id = $1
       AND ($2::text IS NULL OR action = $2)
       AND ($3::text IS NULL OR actor ->> 'id' = $3)
       AND ($4::text IS NULL OR seq < (SELECT seq FROM audit_events
                                       WHERE id = $4 AND account_id = $1))
     ORDER BY seq DESC LIMIT $5`,
    [f.accountId, f.action ?? null, f.actorId ?? null, f.beforeId ?? null, f.limit],
  );
  return rows as AuditRow[];
}

/** Up to `limit` events of the account's chain after `afterSeq`, oldest first. */
export async function chainAfter(
  q: Queryable,
  accountId: string,
  afterSeq: number,
  limit: number,
): Promise<AuditRow[]> {
  const { rows } = await q.query(
    `SELECT ${COLUMNS} FROM audit_events WHERE account_id = $1 AND seq > $2
     ORDER BY seq LIMIT $3`,
    [accountId, afterSeq, limit],
  );
  return rows as AuditRow[];
}

/** The distinct actors of an account's events (the studio's filter by member). */
export async function auditActors(
  q: Queryable,
  accountId: string,
): Promise<Array<{ id: string; email: string | null }>> {
  const { rows } = await q.query(
    `SELECT actor ->> 'id' AS id, max(actor ->> 'email') AS email FROM audit_events
     WHERE account_id = $1 AND actor ->> 'type' = 'member' AND actor ->> 'id' IS NOT NULL
     GROUP BY actor ->> 'id' ORDER BY 2, 1 LIMIT 500`,
    [accountId],
  );
  return rows as Array<{ id: string; email: string | null }>;
}
