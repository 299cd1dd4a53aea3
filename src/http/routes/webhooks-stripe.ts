// POST /webhooks/stripe (docs/billing.md): Stripe's events, outside /v1 and without a key. The body is
// kept as the raw bytes Stripe signed (the library's signature check needs them exactly); it is parsed
// only once verified. Registered only when Stripe is configured: otherwise the route is a 404.
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../web/context.ts';

/** Stripe's events are small; a larger body is no event of Stripe's. */
const STRIPE_BODY_LIMIT = 512 * 1024;

export function registerStripeWebhook(app: FastifyInstance, ctx: Ctx) {
  const topups = ctx.topups;
  if (!topups) return;
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
