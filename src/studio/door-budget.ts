// The studio's doors' budget per address (docs/account-limits.md, "The studio's doors"): a
// preValidation hook on each door route (routes/auth.ts), decided in memory by DoorBudget
// (admission/door-budget.ts).
import type { preValidationHookHandler } from 'fastify';
import { DoorBudget, doorScope } from '../admission/door-budget.ts';
import type { RefusalPace } from '../admission/refusal-pace.ts';

/** The answer past an address's door budget: a constant page, no template, no form, no CSRF token. */
const TOO_MANY =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Too many requests</title></head>' +
  '<body><h1>Too many requests</h1><p>Too many requests came from your address. Wait a minute, then ' +
  '<a href="/signin">try again</a>.</p></body></html>';

/**
 * The hook of every door (docs/account-limits.md), run before the CSRF check (preHandler), the
 * session, the route and its page: past the address's budget, a 429. It runs once the body is in (a
 * form of at most 64 KiB, the studio's limit): refusing sooner would leave a body unread, and a
 * connection whose body is unread must close, so a refused client would pay, and make the server
 * pay, a new connection per request. Read, the body costs less than that; the connection stays open.
 * An address that keeps coming past its budget gets its 429s late (admission/refusal-pace.ts).
 */
export function doorBudget(perMinute: number, pace: RefusalPace): preValidationHookHandler {
  const budget = new DoorBudget(perMinute);
  return (req, reply, done) => {
    const wait = budget.take(req.ip);
    if (wait === 0) {
      done();
      return;
    }
    pace.later(doorScope(req.ip), () => {
      void reply
        .code(429)
        .header('retry-after', String(wait))
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(TOO_MANY);
    });
  };
}
