// The public API: every request is authenticated by its key and counted against the key's rate limit
// before its route runs; every answer to an authenticated request carries the RateLimit headers.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import type { Ctx } from './context.ts';
import { registerMe } from './routes/me.get.ts';
import { registerModels } from './routes/models.list.ts';
import { registerModelDetail } from './routes/models.detail.ts';
import { registerQuote } from './routes/quote.post.ts';
import { registerGenerationRoutes } from './routes/generations.ts';

export async function registerV1(app: FastifyInstance, ctx: Ctx) {
  app.decorateRequest('apiKey', null as never);
  app.addHook('onRequest', async (req, reply) => {
    const key = await ctx.keys.authenticate(req.headers.authorization);
    req.apiKey = key;
    const d = await ctx.limits.consume(key.id, key.rateLimitPerMinute);
    reply.header('ratelimit-policy', `"default";q=${d.limit};w=60`);
    reply.header('ratelimit', `"default";r=${d.remaining};t=${d.resetSeconds}`);
    if (!d.allowed) {
      throw new ApiError('RATE_LIMITED', `More than ${d.limit} requests a minute on this key; retry after ${d.resetSeconds} s.`,
        undefined, { 'retry-after': String(d.resetSeconds) });
    }
  });
  registerMe(app, ctx);
  registerModels(app, ctx);
  registerModelDetail(app, ctx);
  registerQuote(app, ctx);
  registerGenerationRoutes(app, ctx);
}
