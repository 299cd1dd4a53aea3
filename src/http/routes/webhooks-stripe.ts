// POST /webhooks/stripe (docs/billing.md): Stripe's events, outside /v1 and without a key. The
// body is kept as the raw bytes Stripe signed (the library's signature check needs them exactly);
// it is parsed only once verified. Registered only when Stripe is configured: otherwise the route
// is a 404. Anyone can reach it, so what one address costs is bounded before anything is read or
// computed: a request budget per address (DoorBudget, the studio doors' per-address buckets: in
// memory, per process), its refusals answered late when they keep coming (RefusalPace), and a body
// of at most 64 KiB. A flood from one address then costs this process a 429 each, and never a
// signature check over a large body, while every other address keeps its own budget.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { addressKey } from '../../admission/address.ts';
import { DoorBudget } from '../../admission/door-budget.ts';
import type { Ctx } from '../../web/context.ts';

/** Stripe's events are a few KiB; a larger body is no event of Stripe's. */
export const STRIPE_BODY_LIMIT = 64 * 1024;

export function registerStripeWebhook(app: FastifyInstance, ctx: Ctx) {
  const topups = ctx.topups;
  if (!topups || !ctx.config.stripe) return;
  const budget = new DoorBudget(ctx.config.stripe.webhookPerMinute);
  // Before the body is read: the answer's unread rest (at most the limit) is read and dropped by
  // the server, the connection kept (http/server.ts onResponse).
  app.addHook('onRequest', (req, _reply, done) => {
    const wait = budget.take(req.ip);
    if (wait === 0) {
      done();
      return;
    }
    const refused = new ApiError(
      'RATE_LIMITED',
      `Too many requests from this address; try again in ${wait} seconds.`,
      undefined,
      { 'retry-after': String(wait) },
    );
    ctx.pace.later(`stripe:${addressKey(req.ip)}`, () => done(refused));
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: STRIPE_BODY_LIMIT },
    (_req, body, done) => done(null, body),
  );
  app.post('/webhooks/stripe', async (req, reply) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const sig = req.headers['stripe-signature'];
    // Answered only once the event's effect (or its record) is committed.
    const outcome = await topups.events.receive(raw, typeof sig === 'string' ? sig : undefined);
    return reply.code(200).send({ received: true, outcome });
  });
}
