// The public API: every request is authenticated by its key and counted against the key's rate limit
// before its route runs; every answer to an authenticated request carries the RateLimit headers.
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { KeyRecord } from '../services/keys.ts';
import { overLimit, type LimitDecision } from '../admission/rate-limits.ts';
import { countedBodyBytes } from '../admission/body-budget.ts';
import { ApiError } from '../domain/errors.ts';
import type { Ctx } from '../web/context.ts';
import { sendError } from '../web/error-handler.ts';
import { registerMe } from './routes/me.get.ts';
import { registerModels } from './routes/models.list.ts';
import { registerModelDetail } from './routes/models.detail.ts';
import { registerQuote } from './routes/quote.post.ts';
import { registerGenerationRoutes } from './routes/generations.ts';
import { registerGenerationEvents } from './routes/generation-events.ts';
import { registerUploadRoutes } from './routes/uploads.ts';
import { registerWebhookRoutes } from './routes/webhook-endpoints.ts';
import { registerUsage } from './routes/usage.get.ts';
import type { AllowedMethods } from './allowed-methods.ts';

/** The RateLimit headers of an answer to a keyed request (docs/api.md "Rate limits"). */
export const rateLimitPolicy = (d: LimitDecision) => `"default";q=${d.limit};w=60`;
export const rateLimitState = (d: LimitDecision) =>
  `"default";r=${d.remaining};t=${d.resetSeconds}`;

/**
 * Records the key and who acts (its principal, made with its record) on the request and sets the
 * RateLimit headers; the 429 when over the limit.
 */
export function admit(
  req: FastifyRequest,
  reply: FastifyReply,
  key: KeyRecord,
  d: LimitDecision,
): ApiError | undefined {
  req.apiKey = key;
  req.principal = key.principal;
  reply.header('ratelimit-policy', rateLimitPolicy(d));
  reply.header('ratelimit', rateLimitState(d));
  return d.allowed ? undefined : overLimit(d);
}

/**
 * The 429 of a body its account's budget refuses (admission/body-budget.ts), else undefined; a
 * promise of it when this process's lease of the account's budget does not cover the body.
 */
const overBudget = (ctx: Ctx, req: FastifyRequest, accountId: string) =>
  ctx.bodies.take(accountId, countedBodyBytes(req.headers, ctx.config.bodyLimitBytes));

/**
 * The onRequest hook of every keyed API (/v1, /openai/v1): the bearer key, then its rate limit and its
 * account's budget of request bodies (before the body is read: a refused one is never parsed). Most
 * requests carry a key this process has seen within the last half second and find a lease of the rate
 * limit in memory, and a body the budget does not count (or a lease of it): they are decided
 * synchronously, without a promise.
 */
export function keyAndRateLimit(ctx: Ctx): onRequestHookHandler {
  return (req, reply, done) => {
    // A 429 is answered at once, or late once its key (or, for unknown keys, its address) keeps
    // being refused (admission/refusal-pace.ts).
    const refuse = (e: unknown, scope: string) => {
      if (e instanceof ApiError && e.code === 'RATE_LIMITED') ctx.pace.later(scope, () => done(e));
      else done(e as Error | undefined);
    };
    const key = ctx.keys.cached(req.headers.authorization);
    const d = key && ctx.limits.consumeKeyLocal(key);
    if (key && d) {
      const refused = admit(req, reply, key, d) ?? overBudget(ctx, req, key.accountId);
      if (refused === undefined) done();
      else if (!(refused instanceof Promise)) refuse(refused, `key:${key.id}`);
      else
        refused.then(
          (e) => (e ? refuse(e, `key:${key.id}`) : done()),
          (e: unknown) => refuse(e, `key:${key.id}`),
        );
      return;
    }
    ctx.keys
      .authenticate(req.headers.authorization, req.ip)
      .then(async (k) => ({
        refused:
          admit(req, reply, k, await ctx.limits.consumeKey(k)) ??
          (await overBudget(ctx, req, k.accountId)),
        scope: `key:${k.id}`,
      }))
      .then(
        ({ refused, scope }) => (refused ? refuse(refused, scope) : done()),
        (e: unknown) => refuse(e, `address:${req.ip}`),
      );
  };
}

export async function registerV1(app: FastifyInstance, ctx: Ctx, allowed: AllowedMethods) {
  app.decorateRequest('apiKey', null as never);
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', keyAndRateLimit(ctx));
  registerMe(app, ctx);
  registerModels(app, ctx);
  registerModelDetail(app, ctx);
  registerQuote(app, ctx);
  registerGenerationRoutes(app, ctx);
  registerGenerationEvents(app, ctx);
  registerUploadRoutes(app, ctx);
  registerWebhookRoutes(app, ctx);
  registerUsage(app, ctx);
  // An unknown route under /v1 is answered after the same authentication and rate limit as a known one
  // (the onRequest hook above runs for this scope's not-found handler too): no probing of routes without
  // a key, and every such request counted. A known path with another method is 405 (or OPTIONS 204).
  app.setNotFoundHandler((req, reply) => {
    const known = allowed.answer(req, reply);
    if (known === true) return reply;
    return sendError(
      req,
      reply,
      known ??
        new ApiError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0].slice(0, 200)}.`),
    );
  });
}
