// The studio's doors' budget per address (docs/account-limits.md, "The studio's doors"): an onRequest
// hook on each door route (routes/auth.ts), decided in memory by services/attempt-limits.ts DoorBudget.
import type { onRequestHookHandler } from 'fastify';
import { DoorBudget } from '../services/attempt-limits.ts';

/** The answer past an address's door budget: a constant page, no template, no form, no CSRF token. */
const TOO_MANY =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Too many requests</title></head>' +
  '<body><h1>Too many requests</h1><p>Too many requests came from your address. Wait a minute, then ' +
  '<a href="/signin">try again</a>.</p></body></html>';

/**
 * The onRequest hook of every door (docs/account-limits.md): past the address's budget, a 429 before
 * the body, the session, the CSRF token or a page. A body not read yet is not read: the answer says
 * `Connection: close`, so the client does not send its next request on this connection.
 */
export function doorBudget(perMinute: number): onRequestHookHandler {
  const budget = new DoorBudget(perMinute);
  return (req, reply, done) => {
    const wait = budget.take(req.ip);
    if (wait === 0) {
      done();
      return;
    }
    if (!req.raw.complete) reply.header('connection', 'close');
    void reply
      .code(429)
      .header('retry-after', String(wait))
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(TOO_MANY);
  };
}
