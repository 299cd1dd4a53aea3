// /v1/generations: create, list, read, download, delete.
import type { FastifyInstance, preParsingHookHandler } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { parseLimit } from '../../services/paging.ts';
import { queryParam } from '../body.ts';
import type { Ctx } from '../../web/context.ts';
import { sendContent } from '../../web/content.ts';
import { preferWait } from '../../admission/waiters.ts';
import type { FastifyReply } from 'fastify';
import { idempotencyKeyOf } from '../../web/idempotency-key.ts';

/** An AbortSignal that fires when the client's connection closes before the answer is sent. */
function closedSignal(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => ac.abort());
  return ac.signal;
}

const STATUSES = ['queued', 'succeeded', 'failed', 'refunded'];
export const JSON_TYPE = 'application/json; charset=utf-8';

export function registerGenerationRoutes(app: FastifyInstance, ctx: Ctx) {
  // The contract's order: auth and rate limit (onRequest, v1.ts), then the Idempotency-Key, then the body.
  // Checked before the body is parsed, so a missing key is the answer whatever the body's type or syntax.
  const requireIdempotencyKey: preParsingHookHandler = (req, _reply, payload, done) => {
    if (idempotencyKeyOf(req.headers['idempotency-key']) === undefined) {
      done(
        new ApiError(
          'IDEMPOTENCY_KEY_REQUIRED',
          'Send an Idempotency-Key header of 1 to 255 printable ASCII characters (e.g. a UUID).',
        ),
      );
      return;
    }
    done(null, payload);
  };
  app.post('/generations', { preParsing: requireIdempotencyKey }, async (req, reply) => {
    const idem = idempotencyKeyOf(req.headers['idempotency-key'])!;
    const created = await ctx.generations.create(req.principal, req.body, idem);
    reply.header('location', created.location);
    if (created.replayed) reply.header('idempotent-replayed', 'true');
    const wait = preferWait(req.headers.prefer);
    if (wait === undefined) return reply.code(202).send(created.body);
    // Held: the answer is the state when the render is final or the wait is over (a replay's too).
    const held = await ctx.generations.waitJson(
      req.principal,
      created.body.id as string,
      wait,
      closedSignal(reply),
    );
    if (held.applied) reply.header('preference-applied', `wait=${wait}`);
    return reply.code(202).type(JSON_TYPE).send(held.json);
  });

  app.get('/generations', async (req) => {
    const limit = parseLimit(queryParam(req.query, 'limit'));
    const status = queryParam(req.query, 'status') ?? null;
    const modelId = queryParam(req.query, 'modelId') ?? null;
    const problems = [];
    if (status !== null && !STATUSES.includes(status))
      problems.push({ field: 'status', message: `must be one of ${STATUSES.join(', ')}` });
    if (modelId !== null && (modelId.length > 200 || !ctx.catalog.get(modelId)))
      problems.push({ field: 'modelId', message: 'not a model in the catalog' });
    if (problems.length)
      throw new ApiError(
        'INVALID_INPUT',
        `${problems[0].field}: ${problems[0].message}.`,
        problems,
      );
    return ctx.generations.list(req.principal, {
      limit,
      cursor: queryParam(req.query, 'cursor') ?? null,
      status,
      modelId,
    });
  });

  // A poll of a generation in this process's cache is answered without a promise (nor the reply
  // returned, which Fastify would treat as one).
  app.get<{ Params: { id: string } }>('/generations/:id', (req, reply) => {
    if (req.headers.prefer !== undefined) {
      const wait = preferWait(req.headers.prefer);
      if (wait !== undefined) {
        return ctx.generations
          .waitJson(req.principal, req.params.id, wait, closedSignal(reply))
          .then((held) => {
            if (held.applied) reply.header('preference-applied', `wait=${wait}`);
            return reply.type(JSON_TYPE).send(held.json);
          });
      }
    }
    const json = ctx.generations.cachedJson(req.principal, req.params.id);
    if (json !== undefined) {
      reply.type(JSON_TYPE).send(json);
      return undefined;
    }
    return ctx.generations
      .getJson(req.principal, req.params.id)
      .then((body) => reply.type(JSON_TYPE).send(body));
  });

  app.get<{ Params: { id: string } }>('/generations/:id/content', async (req, reply) => {
    const c = await ctx.generations.content(req.principal, req.params.id);
    return sendContent(req, reply, ctx.storage, c);
  });

  app.post<{ Params: { id: string } }>('/generations/:id/cancel', async (req) =>
    ctx.generations.cancel(req.principal, req.params.id),
  );

  app.delete<{ Params: { id: string } }>('/generations/:id', async (req) =>
    ctx.generations.delete(req.principal, req.params.id),
  );
}
