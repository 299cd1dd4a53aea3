// /openai/v1: OpenAI's chat API over the catalog's text models, for tools built on OpenAI's clients.
// The same keys, rate limits and generations as /v1 (the same authentication hook as v1.ts), with
// errors in OpenAI's shape (errors.ts).
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import type { Ctx } from '../../web/context.ts';
import { keyAndRateLimit } from '../v1.ts';
import { sendOpenAiError } from './errors.ts';
import { registerOpenAiModels } from './models.ts';
import { registerChatCompletions } from './chat.ts';
import { registerResponses } from './responses.ts';
import type { AllowedMethods } from '../allowed-methods.ts';

export async function registerOpenAi(app: FastifyInstance, ctx: Ctx, allowed: AllowedMethods) {
  app.decorateRequest('apiKey', null as never);
  app.decorateRequest('principal', null as never);
  app.setErrorHandler((err, req, reply) => sendOpenAiError(req, reply, err));
  app.addHook('onRequest', keyAndRateLimit(ctx));
  registerOpenAiModels(app, ctx);
  registerChatCompletions(app, ctx);
  registerResponses(app, ctx);
  app.setNotFoundHandler((req, reply) => {
    const known = allowed.answer(req, reply);
    if (known === true) return reply;
    return sendOpenAiError(
      req,
      reply,
      known ??
        new ApiError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0].slice(0, 200)}.`),
    );
  });
}
