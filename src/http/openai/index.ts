// /openai/v1: OpenAI's chat API over the catalog's text models, for tools built on OpenAI's clients.
// The same keys, rate limits and generations as /v1 (the same authentication hook as v1.ts), with
// errors in OpenAI's shape (errors.ts).
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import type { Ctx } from '../../web/context.ts';
import { admit } from '../v1.ts';
import { sendOpenAiError } from './errors.ts';
import { registerOpenAiModels } from './models.ts';
import { registerChatCompletions } from './chat.ts';

export async function registerOpenAi(app: FastifyInstance, ctx: Ctx) {
  app.decorateRequest('apiKey', null as never);
  app.setErrorHandler((err, req, reply) => sendOpenAiError(req, reply, err));
  app.addHook('onRequest', (req, reply, done) => {
    const key = ctx.keys.cached(req.headers.authorization);
    const d = key && ctx.limits.consumeLocal(key.id, key.rateLimitPerMinute);
    if (key && d) {
      done(admit(req, reply, key, d));
      return;
    }
    ctx.keys
      .authenticate(req.headers.authorization, req.ip)
      .then(async (k) => admit(req, reply, k, await ctx.limits.consume(k.id, k.rateLimitPerMinute)))
      .then(done, done);
  });
  registerOpenAiModels(app, ctx);
  registerChatCompletions(app, ctx);
  app.setNotFoundHandler((req, reply) =>
    sendOpenAiError(
      req,
      reply,
      new ApiError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0].slice(0, 200)}.`),
    ),
  );
}
