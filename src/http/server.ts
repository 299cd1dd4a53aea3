// The Fastify application: request ids, the error model, the public /v1 API and the admin API; the
// composition root (app.ts) adds its siblings (the studio).
import type { Principal } from '../domain/principal.ts';
import http from 'node:http';
import type { Socket } from 'node:net';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import { ApiError } from '../domain/errors.ts';
import type { Ctx } from '../web/context.ts';
import { parseJsonBody } from './body.ts';
import { sendError } from '../web/error-handler.ts';
import { AccessLog, withRequestSerializer, type AccessWriter } from './access-log.ts';
import { requestLogger } from './request-log.ts';
import { drainsRest, lingerOnClose, lingeringClose } from './lingering-close.ts';
import { registerV1 } from './v1.ts';
import { FastAnswers } from './fast-answers.ts';
import { newRequestId, requestIdOf } from './request-id.ts';
import { registerAdmin } from './admin/index.ts';
import { registerOps } from './ops.ts';
import { registerOpenApi } from './openapi/routes.ts';
import { registerOpenAi } from './openai/index.ts';
import { registerMcp } from './mcp/index.ts';
import { AllowedMethods } from './allowed-methods.ts';
import { registerStripeWebhook } from './routes/webhooks-stripe.ts';
import { nameRequestSpan, tracingOn } from '../tracing/trace.ts';

/** Request line plus headers; Node answers a larger one with 431 before any route runs. */
export const MAX_HEADER_BYTES = 16 * 1024;
/** Longest request target (path and query) served; a longer one is 400 INVALID_REQUEST. */
export const MAX_URL_BYTES = 8 * 1024;

/** Idle keep-alive connections and sockets without activity are closed after this. */
const IDLE_MS = 65_000;

/** A URL over MAX_URL_BYTES: 400 INVALID_REQUEST (the request is malformed), before any route or key check. */
const urlTooLong = () =>
  new ApiError('INVALID_REQUEST', `The URL is longer than ${MAX_URL_BYTES / 1024} KiB.`);

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (malformed request line or headers,
 * bad Content-Length or Transfer-Encoding, headers over the limit, a request too slow to arrive) get
 * the contract's error body, not Fastify's default one: 431 HEADERS_TOO_LARGE, 408 REQUEST_TIMEOUT,
 * else 400 INVALID_REQUEST.
 */
export function clientErrorHandler(
  this: FastifyInstance,
  err: NodeJS.ErrnoException,
  socket: Socket,
): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'HEADERS_TOO_LARGE',
          `The request line and headers are larger than ${MAX_HEADER_BYTES / 1024} KiB.`,
        ]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'REQUEST_TIMEOUT', 'The request took too long to arrive.']
        : [400, 'INVALID_REQUEST', 'The request is not well-formed HTTP.'];
  this.log.debug({ code: err.code }, 'client error');
  // As Node does: write only when no response to an earlier request on this socket is under way.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const requestId = newRequestId();
    const body = JSON.stringify({ code, message, requestId });
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

const fastAnswers = new WeakMap<FastifyInstance, FastAnswers>();
/** The fast answers of a server made by buildServer (none when turned off or tracing). */
export const fastAnswersOf = (app: FastifyInstance) => fastAnswers.get(app) ?? null;

/** A sibling of the API registered beside it by the composition root (the studio), in a scope of its own. */
export type Sibling = (scope: FastifyInstance) => Promise<void>;

/** The API's own prefixes: an unknown address there is the API's JSON 404, never a page. */
const API_PATH = /^\/(admin\/)?v1(\/|$)/;

/**
 * `access`: where access lines go directly (src/cli/logger.ts); without it, through `log`.
 * `pageNotFound`: the answer to an unknown address outside the API's prefixes (the studio's 404 page).
 */
export function buildServer(
  ctx: Ctx,
  log: Logger,
  siblings: Sibling[] = [],
  access: AccessWriter | null = null,
  pageNotFound?: (req: FastifyRequest, reply: FastifyReply) => unknown,
): FastifyInstance {
  // Polls and quotes answered before the framework (fast-answers.ts); made once the app exists.
  let fast: FastAnswers | null = null;
  // Node's requestTimeout stops watching a request once its headers are in; the body gets the same limit
  // here, counted from the request's start: a client dribbling a body is disconnected when it runs out.
  // One sweep a second over the requests whose body is still arriving (as Node checks its own timeouts),
  // rather than a timer and listeners per request.
  const arriving = new Map<http.IncomingMessage, number>();
  const accessLog = new AccessLog(access);
  const app = Fastify({
    // The request serializer logs method, url and addresses, never headers: keys stay out of logs;
    // a one-time link's token is cut from the url (access-log.ts).
    loggerInstance: withRequestSerializer(log) as unknown as FastifyBaseLogger,
    logController: accessLog,
    // A request's own logger is made when it first writes a line (most never do).
    childLoggerFactory: requestLogger,
    bodyLimit: ctx.config.bodyLimitBytes,
    // The server Fastify would make, with its timeouts; its listener tries the fast answers first.
    // Node checks request timeouts every connectionsCheckingInterval (30 s by default): every second here.
    serverFactory: (handler) => {
      const server = http.createServer(
        { maxHeaderSize: MAX_HEADER_BYTES, connectionsCheckingInterval: 1_000 },
        (req, res) => {
          if (!fast?.take(req, res, handler)) handler(req, res);
        },
      );
      server.keepAliveTimeout = IDLE_MS;
      server.requestTimeout = ctx.config.requestTimeoutMs;
      server.setTimeout(IDLE_MS);
      return server;
    },
    clientErrorHandler,
    // Any id within the URL limit reaches its route, so it is authenticated and answered with the route's
    // own 404 like every other id that cannot exist.
    routerOptions: { maxParamLength: MAX_URL_BYTES },
    // A URL the router cannot decode (bad percent-encoding) or a longer parameter never reaches a route or
    // its hooks; it still gets the contract's body (Fastify's own is another shape).
    // sendError sends the reply; its return value (the reply, a thenable) has nothing to wait for.
    frameworkErrors: (err, req, reply) => {
      void sendError(
        req,
        reply.header('x-request-id', req.id),
        err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? urlTooLong() : err,
      );
    },
    return503OnClosing: true,
    requestIdHeader: false,
    genReqId: requestIdOf,
  });
  if (ctx.config.fastAnswers && !tracingOn()) {
    fast = new FastAnswers({ ctx, access, log: app.log as unknown as Logger, arriving });
    fastAnswers.set(app, fast);
  }
  // Closing: every request goes to Fastify, which answers 503 (return503OnClosing).
  app.addHook('preClose', (done) => {
    fast?.close();
    done();
  });

  // Node answers an Expect other than 100-continue with a bare 417 before any route runs. RFC 9110 lets a
  // server ignore an expectation it does not know: serve the request, so it gets the contract's answer.
  app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res));

  // Only JSON bodies: without the default text/plain parser any other type is a 415. Our own JSON parser
  // refuses what Fastify's secure one does (prototype keys) and also bodies nested deeper than 64 levels.
  app.removeContentTypeParser(['text/plain', 'application/json']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer));
    } catch (e) {
      done(e as Error, undefined);
    }
  });

  // Hooks on every request are callback-style: an async hook costs a promise per request.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done(req.url.length > MAX_URL_BYTES ? urlTooLong() : undefined);
  });
  // A change answered here is seen by this process's next page at once: the live sessions it keeps
  // (services/session-cache.ts) are dropped before the answer goes, those of the key's account for
  // an API call (its balance moved), every one for anything else (the studio's forms, the operator,
  // Stripe's events may change a membership or a balance).
  const sessionCache = ctx.sessionCache;
  if (sessionCache) {
    app.addHook('onSend', (req, _reply, payload, done) => {
      const m = req.method;
      if (m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS') {
        const p = req.principal as Principal | null;
        if (p?.kind === 'key') sessionCache.forgetAccount(p.account);
        else sessionCache.clear();
      }
      done(null, payload);
    });
  }
  // Traced (src/tracing/): the request's span is named by its route, as the HTTP conventions ask.
  if (tracingOn()) {
    app.addHook('onRequest', (req, _reply, done) => {
      nameRequestSpan(req.method, req.routeOptions.url);
      done();
    });
  }
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [raw, deadline] of arriving) {
      if (raw.complete || raw.destroyed) arriving.delete(raw);
      else if (now > deadline) {
        arriving.delete(raw);
        raw.socket?.destroy();
      }
    }
  }, 1_000).unref();
  app.addHook('onClose', (_app, done) => {
    clearInterval(sweep);
    done();
  });
  /** The request's deadline (performance.now() time): its timeout, counted from its start. */
  const deadlineOf = (reply: FastifyReply) =>
    performance.now() + ctx.config.requestTimeoutMs - reply.elapsedTime;
  /** An early answer's unread rest is read and dropped, not closed on (lingering-close.ts). */
  const drained = (req: FastifyRequest, reply: FastifyReply) =>
    drainsRest(req.headers) && reply.raw.shouldKeepAlive;
  app.addHook('preParsing', (req, reply, payload, done) => {
    // A request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112, 6.3).
    const h = req.headers;
    if (
      !req.raw.complete &&
      (h['content-length'] !== undefined || h['transfer-encoding'] !== undefined)
    )
      arriving.set(req.raw, deadlineOf(reply));
    // A body the fast answers read (a quote they left to Fastify) is parsed from their bytes.
    done(null, fast?.payload(req.raw) ?? payload);
  });
  // A reply its route took over (web/hijack.ts: event streams, MCP) that its client left skips
  // onResponse: it is logged and counted when its socket closes, with its whole duration.
  app.decorate('hijackedEnd', (req: FastifyRequest, reply: FastifyReply) => {
    accessLog.requestCompleted(null, req, reply);
    ctx.metrics.observeRequest(
      req.routeOptions.url ?? 'unmatched',
      req.method,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
  });
  app.addHook('onResponse', (req, reply, done) => {
    // Answered before its body arrived (401, 409, 413, 429…): a small body is read and dropped by Node
    // within the request's deadline (the sweep above), the connection kept; else the connection closes
    // once the client has had the answer, within that deadline (lingering-close.ts).
    if (!req.raw.complete && drained(req, reply)) arriving.set(req.raw, deadlineOf(reply));
    else {
      if (!req.raw.complete) lingeringClose(req.raw.socket, deadlineOf(reply));
      arriving.delete(req.raw);
    }
    ctx.metrics.observeRequest(
      req.routeOptions.url ?? 'unmatched',
      req.method,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
  // An error answered while a declared body, large or of unknown length, is still arriving (a wrong key
  // on a large upload, a body over the limit) says `Connection: close`: a client that has already handed
  // its whole body to the kernel must not send its next request into the close. The socket still
  // lingers for the client to read the answer (lingering-close.ts). The rest of a small body is read
  // and dropped instead (onResponse above), unless the connection closes anyway (the client's
  // `Connection: close`, HTTP/1.0): then it lingers too. In every scope, before its error handler.
  app.addHook('onError', (req, reply, _err, done) => {
    const h = req.headers;
    const declared = h['transfer-encoding'] !== undefined || Number(h['content-length'] ?? 0) > 0;
    if (declared && !req.raw.complete && !drained(req, reply)) {
      reply.header('connection', 'close');
      lingerOnClose(req.raw.socket, deadlineOf(reply));
    }
    done();
  });
  app.setErrorHandler((err, req, reply) => sendError(req, reply, err));
  // Every route of every scope, for 405 and OPTIONS (allowed-methods.ts): watched before any is added.
  const allowed = new AllowedMethods();
  allowed.watch(app);
  // Unknown addresses: the API's JSON under its prefixes, else the siblings' page (the studio's 404)
  // for browsers.
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0];
    const known = allowed.answer(req, reply);
    if (known === true) return reply;
    if (known) return sendError(req, reply, known);
    // A page for what a browser navigates to (GET or HEAD asking for HTML); API clients and odd
    // methods keep the one JSON error body.
    const wantsPage =
      (req.method === 'GET' || req.method === 'HEAD') &&
      /text\/html/.test(req.headers.accept ?? '');
    if (pageNotFound && wantsPage && !API_PATH.test(path)) return pageNotFound(req, reply);
    return sendError(
      req,
      reply,
      new ApiError('NOT_FOUND', `No route ${req.method} ${path.slice(0, 200)}.`),
    );
  });

  registerOps(app, ctx);
  registerOpenApi(app, ctx);
  app.register(async (v1) => registerV1(v1, ctx, allowed), { prefix: '/v1' });
  app.register(async (openai) => registerOpenAi(openai, ctx, allowed), { prefix: '/openai/v1' });
  app.register(async (mcp) => registerMcp(mcp, ctx), { prefix: '/mcp' });
  app.register(async (admin) => registerAdmin(admin, ctx), { prefix: '/admin/v1' });
  // Stripe's signed events, with a raw-body parser of their own (docs/billing.md).
  app.register(async (stripe) => registerStripeWebhook(stripe, ctx));
  // Siblings such as the studio's pages at `/`, each in a scope of its own (the studio's cookies, forms
  // and CSRF never reach the API).
  for (const sibling of siblings) app.register(sibling);
  return app;
}
