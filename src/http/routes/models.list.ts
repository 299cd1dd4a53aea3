import type { FastifyInstance } from 'fastify';
import { toPublicModel } from '../../domain/model-view.ts';
import type { Ctx } from '../../web/context.ts';

export function registerModels(app: FastifyInstance, ctx: Ctx) {
  // The catalog is fixed for the life of the process: build the answer once.
  const body = JSON.stringify({ data: ctx.catalog.models.map(toPublicModel), nextCursor: null });
  app.get('/models', async (_req, reply) =>
    reply.type('application/json; charset=utf-8').send(body),
  );
}
