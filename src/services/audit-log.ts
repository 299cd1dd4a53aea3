// Reading the audit log (docs/api.md "Audit log"): the studio's Audit log page (owners and admins:
// authorize's 'audit.view') and the operator's GET /admin/v1/accounts/{id}/audit-events, both a
// page at a time, newest first, like every list. What the upper layers need of src/audit/ (the
// list of actions, an event's shape, where a request came from) they take from here.
import { isAuditAction } from '../audit/actions.ts';
import { eventOf, type AuditEvent } from '../audit/chain.ts';
import { accountById } from '../db/accounts.ts';
import { auditActors, pageAuditEvents } from '../db/audit-events.ts';
import type { Db } from '../db/pool.ts';
import { accountFor } from '../domain/authorize.ts';
import { ApiError } from '../domain/errors.ts';
import type { Principal } from '../domain/principal.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';

export { AUDIT_ACTIONS, type AuditAction } from '../audit/actions.ts';
export type { AuditEvent } from '../audit/chain.ts';
export type { AuditSource } from '../audit/record.ts';

export interface AuditQuery {
  limit: number;
  cursor: string | null;
  /** Only this action (one of AUDIT_ACTIONS; anything else is INVALID_INPUT). */
  action?: string;
  /** Only events whose actor has this id (a member's person id, a key's id). */
  actor?: string;
}

function checked(q: AuditQuery) {
  if (q.action !== undefined && !isAuditAction(q.action)) {
    throw new ApiError('INVALID_INPUT', 'action: not an action of the audit log.', [
      { field: 'action', message: 'not an action of the audit log' },
    ]);
  }
  if (q.actor !== undefined && (q.actor.length === 0 || q.actor.length > 100)) {
    throw new ApiError('INVALID_INPUT', 'actor: an id of 1 to 100 characters.', [
      { field: 'actor', message: 'an id of 1 to 100 characters' },
    ]);
  }
  return q.cursor === null ? undefined : decodeCursor(q.cursor);
}

export class AuditLog {
  constructor(private db: Db) {}

  /** A page of the account's events, newest first; the operator names the account. */
  async list(p: Principal, q: AuditQuery, account?: string): Promise<Page<AuditEvent>> {
    const accountId = accountFor(p, 'audit.view', account);
    const beforeId = checked(q);
    if (p.kind === 'operator' && !(await accountById(this.db, accountId)))
      throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${accountId}.`);
    const rows = await pageAuditEvents(this.db, {
      accountId,
      action: q.action,
      actorId: q.actor,
      beforeId,
      limit: q.limit + 1,
    });
    const data = rows.slice(0, q.limit).map(eventOf);
    return { data, nextCursor: rows.length > q.limit ? encodeCursor(data.at(-1)!.id) : null };
  }

  /** The members that appear in the account's log, for the page's filter. */
  async members(p: Principal): Promise<Array<{ id: string; email: string | null }>> {
    return auditActors(this.db, accountFor(p, 'audit.view'));
  }
}
