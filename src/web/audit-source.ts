// Where a request came from, as the audit log records it (docs/api.md "Audit log"): the client's
// address as Fastify resolved it (behind the configured proxies) and its User-Agent, cut short so
// a client cannot make an event large.
import type { FastifyRequest } from 'fastify';
import type { AuditSource } from '../services/audit-log.ts';

const MAX_USER_AGENT = 512;

export function sourceOf(req: FastifyRequest): AuditSource {
  const ua = req.headers['user-agent'];
  return {
    ip: req.ip || null,
    userAgent: typeof ua === 'string' && ua !== '' ? ua.slice(0, MAX_USER_AGENT) : null,
  };
}
