// Request ids: the client's X-Request-Id when it is a safe token, else one of ours. Shared by Fastify's
// genReqId (server.ts) and the answers given before the framework (fast-answers.ts).
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

// 24 hex digits, a random per-process prefix and a counter. Unique across processes without asking
// the CSPRNG on every request (which cost ~5 % of a request's CPU).
const ID_PREFIX = crypto.randomBytes(4).toString('hex');
let idCounter = 0;
export const newRequestId = () => `req_${ID_PREFIX}${(idCounter++).toString(16).padStart(16, '0')}`;

/** The id of `req`: the one it sent, when safe to echo and log, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && SAFE_REQUEST_ID.test(sent) ? sent : newRequestId();
}
