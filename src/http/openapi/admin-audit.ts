// The audit log in the admin OpenAPI document (docs/api.md "Audit log"): its list's path and the
// event's schema, kept apart from admin-document.ts so each resource is one piece.
import type { AdminOp } from './admin-helpers.ts';
import { AUDIT_ACTIONS } from '../../services/audit-log.ts';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const str = { type: 'string' };
const orNull = (s: Record<string, unknown>) => ({ oneOf: [s, { type: 'null' }] });
const obj = (required: string[], properties: Record<string, unknown>, closed = true) => ({
  type: 'object',
  required,
  ...(closed ? { additionalProperties: false } : {}),
  properties,
});
const hex64 = { type: 'string', pattern: '^[0-9a-f]{64}$' };
const q = (name: string, schema: unknown = str) => ({ name, in: 'query', schema });

/** `/accounts/{id}/audit-events`, made with the document's own `op` (its errors and shape). */
type Op = AdminOp;

export function auditPaths(op: Op) {
  return {
    '/accounts/{id}/audit-events': {
      get: op(
        'listAuditEvents',
        "The account's audit events, newest first (in the order of its hash chain).",
        '200',
        'AuditEventList',
        {
          parameters: [
            { name: 'id', in: 'path', required: true, schema: str },
            q('limit', { type: 'integer', minimum: 1, maximum: 100 }),
            q('cursor'),
            q('action', { enum: [...AUDIT_ACTIONS] }),
            q('actor'),
          ],
        },
        [404],
      ),
    },
  };
}

export const auditSchemas = {
  AuditEvent: obj(
    ['id', 'at', 'action', 'actor', 'target', 'ip', 'userAgent', 'details', 'hash', 'prevHash'],
    {
      id: { type: 'string', pattern: '^aud_[0-9a-f]{32}$' },
      at: { type: 'string', format: 'date-time' },
      action: { enum: [...AUDIT_ACTIONS] },
      actor: obj(['type', 'id'], {
        type: { enum: ['member', 'key', 'operator', 'system'] },
        id: { type: ['string', 'null'] },
        email: str,
        name: str,
      }),
      target: orNull(obj(['type', 'id'], { type: str, id: str })),
      ip: { type: ['string', 'null'] },
      userAgent: { type: ['string', 'null'] },
      details: { type: 'object' },
      hash: hex64,
      prevHash: hex64,
    },
  ),
  AuditEventList: obj(['data', 'nextCursor'], {
    data: { type: 'array', items: ref('AuditEvent') },
    nextCursor: { type: ['string', 'null'] },
  }),
};
