// The Audit log page (docs/api.md "Audit log"): the account's events newest first, filtered by
// action and by member, a page at a time like History, and the same list as CSV. Owners and
// admins only (authorize's 'audit.view'); anyone else gets the 403 page naming who may.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { ApiError } from '../../domain/errors.ts';
import { AUDIT_ACTIONS, type AuditEvent } from '../../services/audit-log.ts';
import { csvLine } from '../csv.ts';
import { signedIn, type StudioCtx } from '../types.ts';
import { page } from '../view.ts';

const PAGE = 50;
const CSV_PAGE = 100;

type AuditQuery = { Querystring: { action?: string; actor?: string; cursor?: string } };

/** The filters of the query string: an action of the list and an actor id, else none. */
function filters(req: FastifyRequest<AuditQuery>) {
  const q = req.query;
  const action = (AUDIT_ACTIONS as readonly string[]).includes(q.action ?? '')
    ? q.action
    : undefined;
  const actor = typeof q.actor === 'string' && /^[\w-]{1,100}$/.test(q.actor) ? q.actor : undefined;
  return { action, actor };
}

/** Who acted, as a person reads it. */
export const actorLabel = (e: AuditEvent) =>
  e.actor.email ??
  e.actor.name ??
  (e.actor.type === 'operator' || e.actor.type === 'system'
    ? `the ${e.actor.type}`
    : `${e.actor.type} ${e.actor.id ?? ''}`);

const HEADER = [
  'id',
  'at',
  'action',
  'actorType',
  'actorId',
  'actorEmail',
  'targetType',
  'targetId',
  'ip',
  'userAgent',
  'details',
  'hash',
  'prevHash',
];

const csvRow = (e: AuditEvent) =>
  csvLine([
    e.id,
    e.at,
    e.action,
    e.actor.type,
    e.actor.id,
    e.actor.email,
    e.target?.type,
    e.target?.id,
    e.ip,
    e.userAgent,
    e.details,
    e.hash,
    e.prevHash,
  ]);

export function registerAuditRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const pre = { preHandler: signedIn(ctx) };

  app.get<AuditQuery>('/audit', pre, async (req, reply) => {
    const f = filters(req);
    const cursor = req.query.cursor || null;
    let list;
    try {
      list = await ctx.auditLog.list(req.principal, { limit: PAGE, cursor, ...f });
    } catch (e) {
      if (e instanceof ApiError && e.code === 'INVALID_INPUT') return reply.redirect('/audit', 303);
      throw e;
    }
    const kept = {
      ...(f.action ? { action: f.action } : {}),
      ...(f.actor ? { actor: f.actor } : {}),
    };
    const more = list.nextCursor
      ? `/audit?${new URLSearchParams({ ...kept, cursor: list.nextCursor })}`
      : null;
    return page(reply, 'audit', req, {
      title: 'Audit log',
      events: list.data,
      more,
      filter: f,
      actions: AUDIT_ACTIONS,
      members: await ctx.auditLog.members(req.principal),
      csv: `/audit.csv${Object.keys(kept).length ? `?${new URLSearchParams(kept)}` : ''}`,
      actorLabel,
    });
  });

  app.get<AuditQuery>('/audit.csv', pre, async (req, reply) => {
    const f = filters(req);
    const who = req.principal;
    // The first page is read before the answer starts, so a refusal is still a 403 page.
    const first = await ctx.auditLog.list(who, { limit: CSV_PAGE, cursor: null, ...f });
    async function* rows() {
      yield csvLine(HEADER);
      let p = first;
      for (;;) {
        for (const e of p.data) yield csvRow(e);
        if (!p.nextCursor) return;
        p = await ctx.auditLog.list(who, { limit: CSV_PAGE, cursor: p.nextCursor, ...f });
      }
    }
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="audit-log.csv"')
      .header('cache-control', 'no-store')
      .send(Readable.from(rows()));
  });
}
