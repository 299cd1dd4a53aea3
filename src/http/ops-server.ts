// The operational endpoints alone (/healthz, /readyz, /metrics), for a `worker` process: it serves no
// API, but its supervisor still probes it and Prometheus still scrapes its render metrics, which only
// the process that runs the renders can report.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ApiError } from '../domain/errors.ts';
import type { Ctx } from '../web/context.ts';
import { sendError } from '../web/error-handler.ts';
import { NoRequestLog } from './access-log.ts';
import { registerOps } from './ops.ts';
import { MAX_HEADER_BYTES, clientErrorHandler } from './server.ts';
import { newRequestId } from './request-id.ts';

export function buildOpsServer(ctx: Ctx, log: Logger): FastifyInstance {
  const app = Fastify({
    loggerInstance: log as unknown as FastifyBaseLogger,
    logController: new NoRequestLog(),
    // the same protocol limits as the API: malformed or oversized requests get the contract's body
    http: { maxHeaderSize: MAX_HEADER_BYTES, connectionsCheckingInterval: 1_000 },
    clientErrorHandler,
    requestTimeout: ctx.config.requestTimeoutMs,
    return503OnClosing: true,
    requestIdHeader: false,
    genReqId: newRequestId,
  });
  app.removeContentTypeParser(['text/plain', 'application/json']); // no endpoint here takes a body
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  app.setErrorHandler((err, req, reply) => sendError(req, reply, err));
  app.setNotFoundHandler((req, reply) =>
    sendError(
      req,
      reply,
      new ApiError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0].slice(0, 200)}.`),
    ),
  );
  registerOps(app, ctx);
  return app;
}
