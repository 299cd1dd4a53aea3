// Polls answered before the framework. A poll of a generation this process holds in its cache is the
// request API clients send most, and its own work is a few map lookups; Fastify's per-request
// machinery around it (request and reply objects, hook runners, 'finish' listeners) cost it more CPU
// than that work. Measured with the project's perf tool on this 2-core machine, poll throughput went
// from 0.49 to 0.66 of a bare node:http server answering the same bytes (docs/operations.md).
//
// The answer keeps every rule of the route it stands for, through the same code: the key and its
// rate limit (KeyResolver.cached, RateLimits.consumeLocal), the request id (request-id.ts), the
// RateLimit headers (v1.ts), the generation's cached JSON (what the route sends), the access line
// (access-log.ts) and the request metrics, with the same headers in the same order.
//
// Only that exact case is taken; anything else goes to Fastify untouched, and is answered as before:
// another method or path, a query string, Prefer, Accept-Version, a body, a key not looked up in the
// last half second, a rate limit without a lease in memory or exhausted, a generation not in the
// cache, a process that is closing (Fastify's 503), and every request while tracing is on (its spans
// are named by Fastify's routes). A request is taken only before anything of it is consumed, so a
// request Fastify gets is always whole.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Ctx } from '../web/context.ts';
import { completedLine, type AccessWriter } from './access-log.ts';
import { requestIdOf } from './request-id.ts';
import { rateLimitPolicy, rateLimitState } from './v1.ts';
import { JSON_TYPE } from './routes/generations.ts';

const POLL_PREFIX = '/v1/generations/';
/** The route's name in metrics, as Fastify's routeOptions.url gives it. */
const POLL_ROUTE = '/v1/generations/:id';

export interface FastAnswerOptions {
  ctx: Ctx;
  /** Where access lines go directly; null: through `log`. */
  access: AccessWriter | null;
  /** Fastify's logger (with its serializers of `req` and `res`). */
  log: Logger;
}

export class FastAnswers {
  /** Requests answered here (the tests read it). */
  answered = 0;
  private open = true;

  constructor(private readonly o: FastAnswerOptions) {}

  /** From now on every request goes to Fastify (which answers 503 while the server closes). */
  close(): void {
    this.open = false;
  }

  /** True when `req` was answered here; false: nothing of it was consumed, Fastify answers it. */
  take(req: IncomingMessage, res: ServerResponse): boolean {
    if (!this.open || req.method !== 'GET') return false;
    const url = req.url!;
    const h = req.headers;
    if (
      !url.startsWith(POLL_PREFIX) ||
      h.prefer !== undefined ||
      h['accept-version'] !== undefined ||
      h['content-length'] !== undefined ||
      h['transfer-encoding'] !== undefined
    )
      return false;
    const t0 = performance.now();
    const { ctx } = this.o;
    const key = ctx.keys.cached(h.authorization);
    if (!key) return false;
    // Only ids in the cache are found, so a path with anything after the id (a query, a slash, an
    // escape) is never taken.
    const json = ctx.generations.cachedJson(key.accountId, url.slice(POLL_PREFIX.length), key.mode);
    if (json === undefined) return false;
    const d = ctx.limits.consumeLocal(key.id, key.rateLimitPerMinute);
    // Refused or undecided from memory: nothing was consumed, and Fastify's hook decides it (the 429).
    if (!d?.allowed) return false;
    const id = requestIdOf(req);
    res.writeHead(200, {
      'x-request-id': id,
      'ratelimit-policy': rateLimitPolicy(d),
      ratelimit: rateLimitState(d),
      'content-type': JSON_TYPE,
      'content-length': Buffer.byteLength(json),
    });
    res.end(json);
    this.answered++;
    this.completed(req, id, performance.now() - t0);
    return true;
  }

  /** Metrics and the access line, once the answer is handed to the socket (Fastify logs on 'finish'). */
  private completed(req: IncomingMessage, id: string, ms: number): void {
    const { ctx, access, log } = this.o;
    ctx.metrics.observeRequest(POLL_ROUTE, 'GET', 200, ms / 1000);
    const socket = req.socket as Socket | undefined;
    const host = req.headers.host;
    const ip = socket?.remoteAddress;
    if (access === null) {
      // The shapes Fastify's serializers read (a request's host, ip and socket; a reply's status).
      const r = { method: 'GET', url: req.url, host, ip, socket };
      log.info(
        { reqId: id, req: r, res: { statusCode: 200 }, responseTime: ms },
        'request completed',
      );
    } else if (access.enabled()) {
      // One literal of the shape accessLine() makes: a spread here made V8 miss its caches each time.
      const url = req.url!;
      const line = {
        id,
        method: 'GET',
        url,
        version: undefined,
        socket,
        host,
        ip,
        status: 200,
        ms,
      };
      access.write(completedLine(access.bindings, line));
    }
  }
}
