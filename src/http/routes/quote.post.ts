import type { FastifyInstance } from 'fastify';
import { parseRenderRequest } from '../../domain/inputs.ts';
import { priceOf } from '../../domain/pricing.ts';
import { objectBody } from '../../domain/body.ts';
import type { Ctx } from '../../web/context.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

export function registerQuote(app: FastifyInstance, ctx: Ctx) {
  // Synchronous (validation and pricing are): no promise per quote. A thrown error reaches the error handler.
  // The answer is serialised here and sent as text with the type Fastify gives JSON (the same bytes):
  // an object takes Fastify's serialisation path, which cost a quote several µs of CPU more.
  app.post('/quote', (req, reply) => {
    const { model, inputs } = parseRenderRequest(ctx.catalog, objectBody(req.body));
    const body = JSON.stringify({
      modelId: model.id,
      inputs,
      costCents: priceOf(model, inputs),
      currency: 'EUR',
    });
    // Image inputs given as upload addresses must be this account's, still kept: a query only then.
    const named = ctx.uploads.uploadInputs(model, inputs);
    if (named.size === 0) {
      reply.type(JSON_TYPE).send(body);
      return undefined;
    }
    return ctx.uploads
      .checkInputs(req.apiKey.accountId, named)
      .then(() => reply.type(JSON_TYPE).send(body));
  });
}
