import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { toPublicModel } from '../../domain/model-view.ts';
import { inputSchemaOf } from '../../domain/input-schema.ts';
import { queryParam } from '../body.ts';
import type { Ctx } from '../../web/context.ts';

export function registerModelDetail(app: FastifyInstance, ctx: Ctx) {
  // The catalog is fixed for the life of the process: each model's answer is built once.
  const detail = new Map(
    ctx.catalog.models.map((m) => [m.id, { ...toPublicModel(m), inputSchema: inputSchemaOf(m) }]),
  );
  app.get('/models/detail', async (req) => {
    const id = queryParam(req.query, 'id');
    if (id === undefined || id === '')
      throw new ApiError('INVALID_INPUT', 'id: give the model id, e.g. ?id=vendor/model.', [
        { field: 'id', message: 'is required' },
      ]);
    const model = ctx.catalog.get(id);
    if (!model)
      throw new ApiError(
        'MODEL_NOT_FOUND',
        `No model ${JSON.stringify(id.slice(0, 200))} in the catalog.`,
      );
    return detail.get(model.id);
  });
}
