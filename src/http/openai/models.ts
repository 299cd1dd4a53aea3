// GET /openai/v1/models: the catalog's text models as OpenAI's model list. The catalog is fixed for the
// life of the process, so the answer is built once; `created` is when this process loaded it.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import type { Ctx } from '../../web/context.ts';

export function registerOpenAiModels(app: FastifyInstance, ctx: Ctx) {
  const created = Math.floor(Date.now() / 1000);
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
