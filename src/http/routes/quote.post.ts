import type { FastifyInstance } from 'fastify';
import { parseRenderRequest } from '../../domain/inputs.ts';
import { priceOf } from '../../domain/pricing.ts';
import { objectBody } from '../../domain/body.ts';
import type { Ctx } from '../../web/context.ts';
import { JSON_TYPE } from './generations.ts';

/**
 * A quote's answer, serialised (the same bytes Fastify would make of the object), and the image inputs
 * given as upload addresses, which must still be this account's (a query) before it is given. Throws the
 * contract's errors for a body that is not a valid request. Also used by the fast answers
 * (fast-answers.ts), which give it to quotes before the framework.
 */
export function quoteAnswer(ctx: Ctx, body: unknown): { json: string; named: Map<string, string> } {
  const { model, inputs } = parseRenderRequest(ctx.catalog, objectBody(body));
  const json = JSON.stringify({
    modelId: model.id,
    inputs,
    costCents: priceOf(model, inputs),
    currency: 'EUR',
  });
  return { json, named: ctx.uploads.uploadInputs(model, inputs) };
}

export function registerQuote(app: FastifyInstance, ctx: Ctx) {
  // Synchronous (validation and pricing are): no promise per quote. A thrown error reaches the error handler.
  // The answer is serialised here and sent as text with the type Fastify gives JSON (the same bytes):
  // an object takes Fastify's serialisation path, which cost a quote several µs of CPU more.
  app.post('/quote', (req, reply) => {
    const { json, named } = quoteAnswer(ctx, req.body);
    if (named.size === 0) {
      reply.type(JSON_TYPE).send(json);
      return undefined;
    }
    return ctx.uploads
      .checkInputs(req.principal, named)
      .then(() => reply.type(JSON_TYPE).send(json));
  });
}
