// The Fastify application: request ids, the error model, the public /v1 API and the admin API.
import crypto from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ApiError } from '../domain/errors.ts';
import type { Ctx } from './context.ts';
import { sendError } from './error-handler.ts';
import { registerV1 } from './v1.ts';
import { registerAdmin } from './admin/index.ts';
import { registerOps } from './ops.ts';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export function buildServer(ctx: Ctx, log: Logger): FastifyInstance {
  const app = Fastify({
    // The default request serializer logs method, url and addresses, never headers: keys stay out of logs.
    loggerInstance: log as unknown as FastifyBaseLogger,
    bodyLimit: ctx.config.bodyLimitBytes,
    requestTimeout: 30_000,
    connectionTimeout: 65_000,
    keepAliveTimeout: 65_000,
    routerOptions: { maxParamLength: 200 },
    return503OnClosing: true,
    requestIdHeader: false,
    genReqId: (req) => {
      const sent = req.headers['x-request-id'];
      return typeof sent === 'string' && SAFE_REQUEST_ID.test(sent) ? sent : `req_${crypto.randomBytes(12).toString('hex')}`;
    },
  });

  // Only JSON bodies: without the default text/plain parser any other type is a 415.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    ctx.metrics.httpRequests.inc({ route, method: req.method, status: reply.statusCode });
    ctx.metrics.httpDuration.observe({ route, method: req.method }, reply.elapsedTime / 1000);
    if (reply.statusCode === 429) ctx.metrics.rateLimited.inc();
  });
  app.setErrorHandler((err, req, reply) => sendError(req, reply, err));
  app.setNotFoundHandler((req, reply) => sendError(req, reply, new ApiError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0].slice(0, 200)}.`)));

  registerOps(app, ctx);
  app.register(async (v1) => registerV1(v1, ctx), { prefix: '/v1' });
  app.register(async (admin) => registerAdmin(admin, ctx), { prefix: '/admin/v1' });
  return app;
}
