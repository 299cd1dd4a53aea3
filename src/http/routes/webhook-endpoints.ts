// /v1/webhook-endpoints: an account's endpoints of the key's mode (a test key's are test endpoints,
// which receive test renders' events only) and each one's deliveries.
import type { FastifyInstance } from 'fastify';
import { parseLimit } from '../../services/paging.ts';
import { queryParam } from '../body.ts';
import type { Ctx } from '../../web/context.ts';
import { sourceOf } from '../../web/audit-source.ts';

type ById = { Params: { id: string } };

export function registerWebhookRoutes(app: FastifyInstance, ctx: Ctx) {
  const page = (query: unknown) => ({
    limit: parseLimit(queryParam(query, 'limit')),
    cursor: queryParam(query, 'cursor') ?? null,
  });

  app.post('/webhook-endpoints', async (req, reply) => {
    const made = await ctx.webhooks.create(req.principal, req.body, undefined, sourceOf(req));
    // RFC 9110 15.3.2: a 201 names the resource it created.
    return reply
      .code(201)
      .header('location', `${ctx.config.publicUrl}/v1/webhook-endpoints/${made.id}`)
      .send(made);
  });
  app.get('/webhook-endpoints', async (req) => ctx.webhooks.list(req.principal, page(req.query)));
  app.get<ById>('/webhook-endpoints/:id', async (req) =>
    ctx.webhooks.get(req.principal, req.params.id),
  );
  app.delete<ById>('/webhook-endpoints/:id', async (req) =>
    ctx.webhooks.delete(req.principal, req.params.id, sourceOf(req)),
  );
  app.get<ById>('/webhook-endpoints/:id/deliveries', async (req) =>
    ctx.webhooks.deliveries(req.principal, req.params.id, page(req.query)),
  );
}
