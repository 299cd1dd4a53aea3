// Polls and quotes answered before the framework. A poll of a generation this process holds in its
// cache is the request API clients send most, and its own work is a few map lookups; Fastify's
// per-request machinery around it (request and reply objects, hook runners, 'finish' listeners) cost
// it more CPU than that work. Measured with the project's perf tool on this 2-core machine, poll
// throughput went from 0.49 to 0.66 of a bare node:http server answering the same bytes
// (docs/operations.md).
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
//
// A quote (POST /v1/quote, a JSON body of at most FAST_BODY_MAX bytes, a key looked up in the last
// half second, no Prefer, Accept-Version or Expect) is the other request clients repeat most, with
// more of the framework's work around it (a body to parse): 74-83 µs of CPU through Fastify, for 3 µs
// of its own. Its body is read here (fast-quote.ts); a valid quote without upload inputs is answered
// with the route's quoteAnswer, cached by the body's bytes. Every other such request (an invalid body,
// upload inputs to check, a rate limit not decided from memory) is handed to Fastify with the bytes
// read, which its preParsing hook parses in place of the socket's (payloadOf): Fastify answers it as
// it would have, errors included.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Ctx } from '../web/context.ts';
import { completedLine, type AccessWriter } from './access-log.ts';
import { requestIdOf } from './request-id.ts';
import { rateLimitPolicy, rateLimitState } from './v1.ts';
import type { LimitDecision } from '../admission/rate-limits.ts';
import { JSON_TYPE } from './routes/generations.ts';
import { quoteAnswer } from './routes/quote.post.ts';
import { parseJsonBody } from './body.ts';
import { bodyIfWhole, FAST_BODY_MAX, payloadOf, QuoteCache, readBody } from './fast-quote.ts';

const POLL_PREFIX = '/v1/generations/';
/** The route's name in metrics, as Fastify's routeOptions.url gives it. */
const POLL_ROUTE = '/v1/generations/:id';
const QUOTE_PATH = '/v1/quote';
/** The JSON types a quote is taken with (Fastify's parser takes these and any other parameters). */
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8']);

export interface FastAnswerOptions {
  ctx: Ctx;
  /** Where access lines go directly; null: through `log`. */
  access: AccessWriter | null;
  /** Fastify's logger (with its serializers of `req` and `res`). */
  log: Logger;
  /** Requests whose body is still arriving, with their deadlines (server.ts destroys them past it). */
  arriving: Map<IncomingMessage, number>;
}

export class FastAnswers {
  /** Requests answered here (the tests read it). */
  answered = 0;
  /** Quotes whose body was read here, then handed to Fastify (the tests read it). */
  handedOn = 0;
  private open = true;
  private readonly quotes = new QuoteCache();
  /** Bodies read here of the requests handed to Fastify, until its preParsing hook takes them. */
  private readonly bodies = new WeakMap<IncomingMessage, Buffer>();

  constructor(private readonly o: FastAnswerOptions) {}

  /** From now on every request goes to Fastify (which answers 503 while the server closes). */
  close(): void {
    this.open = false;
  }

  /**
   * True when `req` is answered here, or handed to Fastify (`handler`) once its body is read; false:
   * nothing of it was consumed, Fastify answers it.
   */
  take(req: IncomingMessage, res: ServerResponse, handler: RequestListener): boolean {
    if (!this.open) return false;
    if (req.method === 'GET') return this.poll(req, res);
    if (req.method === 'POST' && req.url === QUOTE_PATH) return this.quote(req, res, handler);
    return false;
  }

  /** The body read here of a request handed to Fastify, as its payload (once). */
  payload(req: IncomingMessage): Readable | undefined {
    const bytes = this.bodies.get(req);
    if (bytes === undefined) return undefined;
    this.bodies.delete(req);
    return payloadOf(bytes);
  }

  private poll(req: IncomingMessage, res: ServerResponse): boolean {
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
    const json = ctx.generations.cachedJson(key.principal, url.slice(POLL_PREFIX.length));
    if (json === undefined) return false;
    const d = ctx.limits.consumeKeyLocal(key);
    // Refused or undecided from memory: nothing was consumed, and Fastify's hook decides it (the 429).
    if (!d?.allowed) return false;
    // Answered in the loop's check phase, with the other answers of this turn of the loop (as quotes
    // are): by the perf tool's 64 connections, 6-8 % more polls a second than writing each at once.
    setImmediate(() => this.send(req, res, d, json, t0, POLL_ROUTE));
    return true;
  }

  private quote(req: IncomingMessage, res: ServerResponse, handler: RequestListener): boolean {
    const h = req.headers;
    const length = Number(h['content-length']);
    if (
      !(length > 0 && length <= FAST_BODY_MAX) ||
      !JSON_TYPES.has(h['content-type']!) ||
      h.prefer !== undefined ||
      h['accept-version'] !== undefined ||
      h.expect !== undefined ||
      h['transfer-encoding'] !== undefined ||
      !this.o.ctx.keys.cached(h.authorization)
    )
      return false;
    const t0 = performance.now();
    // Node's parser reads the rest of the packet (a small body comes with its headers) after this
    // listener returns, and before the loop's check phase; a tick would run before it. Reading the body
    // from its buffer then, rather than through 'data' and 'end' listeners, saved a quote 12 µs of CPU.
    setImmediate(() => this.bodyIn(req, res, t0, handler));
    return true;
  }

  /** Once the packet of a quote's headers is parsed: its body, or a wait for the rest (its deadline). */
  private bodyIn(req: IncomingMessage, res: ServerResponse, t0: number, handler: RequestListener) {
    const whole = bodyIfWhole(req);
    if (whole !== null) {
      this.quoted(req, res, whole, t0, handler);
      return;
    }
    this.o.arriving.set(req, t0 + this.o.ctx.config.requestTimeoutMs);
    readBody(req, (bytes) => {
      this.o.arriving.delete(req);
      if (bytes !== null) this.quoted(req, res, bytes, t0, handler);
    });
  }

  /** A quote's body is in: the answer, or Fastify's with the bytes read. */
  private quoted(
    req: IncomingMessage,
    res: ServerResponse,
    bytes: Buffer,
    t0: number,
    handler: RequestListener,
  ): void {
    const { ctx } = this.o;
    // Checked again: the body may have taken time, and the process may be closing.
    const key = this.open ? ctx.keys.cached(req.headers.authorization) : undefined;
    const json = key && this.quoteOf(bytes);
    const d = json ? ctx.limits.consumeKeyLocal(key) : null;
    if (!json || !d?.allowed) {
      this.bodies.set(req, bytes);
      this.handedOn++;
      handler(req, res);
      return;
    }
    this.send(req, res, d, json, t0, QUOTE_PATH);
  }

  /** The answer of a valid quote without upload inputs, from the cache or computed; else undefined. */
  private quoteOf(bytes: Buffer): string | undefined {
    const k = QuoteCache.keyOf(bytes);
    const hit = this.quotes.get(k);
    if (hit !== undefined) return hit;
    let a: ReturnType<typeof quoteAnswer>;
    try {
      a = quoteAnswer(this.o.ctx, parseJsonBody(bytes));
    } catch {
      return undefined; // Fastify gives the error
    }
    if (a.named.size > 0) return undefined; // its uploads are checked by the route
    this.quotes.set(k, a.json);
    return a.json;
  }

  /** The route's answer: its headers in its order, its body; then its access line and metrics. */
  private send(
    req: IncomingMessage,
    res: ServerResponse,
    d: LimitDecision,
    json: string,
    t0: number,
    route: string,
  ): void {
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
    this.completed(req, id, performance.now() - t0, route);
  }

  /** Metrics and the access line, once the answer is handed to the socket (Fastify logs on 'finish'). */
  private completed(req: IncomingMessage, id: string, ms: number, route: string): void {
    const { ctx, access, log } = this.o;
    const method = req.method!;
    ctx.metrics.observeRequest(route, method, 200, ms / 1000);
    const socket = req.socket as Socket | undefined;
    const host = req.headers.host;
    const ip = socket?.remoteAddress;
    if (access === null) {
      // The shapes Fastify's serializers read (a request's host, ip and socket; a reply's status).
      const r = { method, url: req.url, host, ip, socket };
      log.info(
        { reqId: id, req: r, res: { statusCode: 200 }, responseTime: ms },
        'request completed',
      );
    } else if (access.enabled()) {
      // One literal of the shape accessLine() makes: a spread here made V8 miss its caches each time.
      const url = req.url!;
      const line = {
        id,
        method,
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
