import type { FastifyInstance } from 'fastify';
import { parseRenderRequest } from '../../domain/inputs.ts';
import { priceOf } from '../../domain/pricing.ts';
import { objectBody } from '../body.ts';
import type { Ctx } from '../context.ts';

export function registerQuote(app: FastifyInstance, ctx: Ctx) {
  app.post('/quote', async (req) => {
    const { model, inputs } = parseRenderRequest(ctx.catalog, objectBody(req.body));
    return { modelId: model.id, inputs, costCents: priceOf(model, inputs), currency: 'EUR' };
  });
}
