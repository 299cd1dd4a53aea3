// GET /openai/v1/models: the catalog's text models as OpenAI's model list. The catalog is fixed for the
// life of the process, so the answer is built once. The catalog carries no dates, and a `created` that
// moves at every restart makes clients that cache the list see new models: it is one fixed time for
// every model, 2025-01-01T00:00:00Z (docs/api.md "OpenAI-compatible endpoints").
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import type { Ctx } from '../../web/context.ts';

/** Unix seconds of every model's `created`: fixed, the same on every node and after restarts. */
export const MODEL_CREATED = 1_735_689_600;

export function registerOpenAiModels(app: FastifyInstance, ctx: Ctx) {
  const created = MODEL_CREATED;
  const models = ctx.chat
    .models()
    .map((m) => ({ id: m.id, object: 'model', created, owned_by: m.id.split('/')[0] }));
  const list = JSON.stringify({ object: 'list', data: models });
  app.get('/models', (_req, reply) => {
    reply.type('application/json; charset=utf-8').send(list);
  });
  app.get<{ Params: { '*': string } }>('/models/*', (req, reply) => {
    const model = models.find((m) => m.id === req.params['*']);
    if (!model)
      throw new ApiError(
        'MODEL_NOT_FOUND',
        `The model ${JSON.stringify(req.params['*'].slice(0, 200))} does not exist.`,
      );
    reply.type('application/json; charset=utf-8').send(model);
  });
}
