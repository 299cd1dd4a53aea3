// One access line per request, when it completes, with the request and the answer together (Fastify
// writes two by default: measured on this machine, the second line alone costs a quarter of a small
// request's throughput). The line on arrival is kept at debug level.
//
// The line has the fields pino writes for `log.info({ req, res, responseTime }, 'request completed')`
// with Fastify's serializers (method, URL, host, address, status, time, request id), in the same
// order, but put together here as one string: pino's generic path (serializers building objects, then
// each object walked and stringified) took 6.6 to 8.9 µs of a poll's event-loop time. Here a line is
// eight pieces, five of them kept from earlier lines (per millisecond, method and connection): timed
// inside the server under the perf tool's polls, a line with its share of its chunk's conversion to
// bytes and write took 1.31-1.42 µs, against 1.47-1.68 µs for the line of twenty pieces before.
// Lines are gathered into chunks (AccessBatch) for the process's log destination (a sonic-boom from
// `pino.destination`, src/cli/logger.ts), through the public APIs only: the logger's `bindings()`,
// `isLevelEnabled()` and `streamWrite` hook, and the destination's `write()`. Without such a
// destination (a logger made elsewhere, a pretty terminal) every line goes through pino's own path.
//
// A request's address is written with its one-time token cut (domain/scrub.ts cutTokens): by the
// direct line here, and by pino's path through the request serializer below, which the server's
// logger carries (`withRequestSerializer`).
import type { Socket } from 'node:net';
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { cutTokens } from '../domain/scrub.ts';

/** Where access lines go directly: a destination of the process's logger, and what that logger adds. */
export interface AccessWriter {
  /** The logger's bindings as JSON members without braces (`"pid":1,"hostname":"h"`), or ''. */
  bindings: string;
  /** Whether the logger writes `info` lines now (its level can change while it runs). */
  enabled(): boolean;
  write(line: string): void;
}

const COMPLETED = ',"msg":"request completed"}\n';

/**
 * What a line says of its connection, put together once per connection, host and status: a keep-alive
 * client sends many requests on one socket, with one Host, and most answers are 200s. `tail` is the
 * line from the end of the URL (or version) to the response time: `,"host":…,"remoteAddress":…,
 * "remotePort":…},"res":{"statusCode":200},"responseTime":`.
 */
interface ConnectionPart {
  host: string | undefined;
  ip: string | undefined;
  json: string;
  status: number;
  tail: string;
}
const connectionParts = new WeakMap<object, ConnectionPart>();

/** `ip`: the client's address as the request sees it (it can come from a header with trustProxy). */
function connectionTail(
  socket: Socket | undefined,
  host: string | undefined,
  ip: string | undefined,
  status: number,
): string {
  const known = socket && connectionParts.get(socket);
  if (known && known.host === host && known.ip === ip) {
    if (known.status !== status) {
      known.status = status;
      known.tail = tailJson(known.json, status);
    }
    return known.tail;
  }
  const port = socket?.remotePort;
  const json = [
    host === undefined ? '' : `"host":${JSON.stringify(host)}`,
    ip === undefined ? '' : `"remoteAddress":${JSON.stringify(ip)}`,
    port === undefined ? '' : `"remotePort":${port}`,
  ]
    .filter(Boolean)
    .join(',');
  const tail = tailJson(json, status);
  // A socket's address and port do not change; only a complete one is kept (a closed socket has none).
  if (socket && port !== undefined) connectionParts.set(socket, { host, ip, json, status, tail });
  return tail;
}

/**
 * One flat string: the pieces of a line stay in memory until their chunk is converted to bytes, and a
 * string made of many pieces is copied piece by piece then. A line of fewer, flat pieces cost less.
 */
const flat = (s: string): string => {
  // Reading a character of a string made of pieces makes V8 copy it into one (it keeps the copy).
  s.charCodeAt(0);
  return s;
};

const tailJson = (conn: string, status: number) =>
  flat(`${conn ? ',' + conn : ''}},"res":{"statusCode":${status}},"responseTime":`);

/** The decimals of a duration's microseconds: '' for none, '.001' to '.999'. */
const FRACTIONS = Array.from({ length: 1000 }, (_, f) =>
  f === 0 ? '' : '.' + String(f).padStart(3, '0'),
);

/**
 * A duration in ms as JSON, to the microsecond. Writing the double itself (as pino does, to 17
 * digits) took a third of the line's CPU; whole numbers are cheap to write.
 */
export function durationJson(ms: number): string {
  const us = Math.round(ms * 1000);
  const whole = Math.floor(us / 1000);
  return String(whole) + FRACTIONS[us - whole * 1000];
}

let headTime = -1;
let headBindings = '';
let head = '';
/** `{"level":30,"time":…,<bindings>,"reqId":`, put together once per millisecond. */
function headJson(bindings: string): string {
  const now = Date.now();
  if (now !== headTime || bindings !== headBindings) {
    headTime = now;
    headBindings = bindings;
    head = flat(`{"level":30,"time":${now}${bindings ? ',' + bindings : ''},"reqId":`);
  }
  return head;
}

let methodName = '';
let methodJson = '';
/** `,"req":{"method":"GET","url":` for the last method seen (nearly always the same). */
function methodPart(method: string): string {
  if (method !== methodName) {
    methodName = method;
    // Node's parser accepts only its list of method names (letters and '-'): nothing to escape.
    methodJson = flat(`,"req":{"method":"${method}","url":`);
  }
  return methodJson;
}

/** What an access line says of one request and its answer. */
export interface Completed {
  id: string;
  method: string;
  url: string;
  /** The Accept-Version header, when sent. */
  version: string | string[] | undefined;
  socket: Socket | undefined;
  host: string | undefined;
  ip: string | undefined;
  status: number;
  /** From the request's arrival to the answer's end. */
  ms: number;
}

/** The `request completed` line, as pino and Fastify's serializers write it (time to the microsecond). */
export function completedLine(bindings: string, c: Completed): string {
  // Eight pieces, five of them kept from earlier lines.
  return (
    headJson(bindings) +
    JSON.stringify(c.id) +
    methodPart(c.method) +
    JSON.stringify(cutTokens(c.url)) +
    (c.version === undefined ? '' : `,"version":${JSON.stringify(c.version)}`) +
    connectionTail(c.socket, c.host, c.ip, c.status) +
    durationJson(c.ms) +
    COMPLETED
  );
}

/** The `request completed` line for a request Fastify answered. */
export function accessLine(bindings: string, request: FastifyRequest, reply: FastifyReply): string {
  return completedLine(bindings, {
    id: request.id,
    method: request.method,
    url: request.url,
    version: request.headers['accept-version'],
    socket: request.socket,
    host: request.host,
    ip: request.ip,
    status: reply.statusCode,
    ms: reply.elapsedTime,
  });
}

/** A request in a log line: as Fastify's own request serializer writes it, its URL's token cut. */
export function requestSerializer(req: {
  method: string;
  url: string;
  headers?: Record<string, string | string[] | undefined>;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}) {
  return {
    method: req.method,
    url: cutTokens(req.url),
    version: req.headers?.['accept-version'],
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket ? req.socket.remotePort : undefined,
  };
}

/**
 * `log` with the request serializer, for Fastify's `loggerInstance`: a logger's own serializers
 * take precedence over the ones Fastify adds, in every request's logger too.
 */
export function withRequestSerializer<L extends { child(b: object, o: object): L }>(log: L): L {
  return log.child({}, { serializers: { req: requestSerializer } });
}

export class AccessLog extends LogController {
  /** `writer`: where lines go directly; null, through pino's own path. */
  constructor(private readonly writer: AccessWriter | null = null) {
    super();
  }

  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  /** Fastify's default 404 line, which names the address in its message: with the token cut. */
  override routeNotFound(request: FastifyRequest): void {
    request.log.info(`Route ${request.method}:${cutTokens(request.url)} not found`);
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) {
      reply.log.error(
        { req: request, res: reply, err: error, responseTime: reply.elapsedTime },
        'request errored',
      );
      return;
    }
    const w = this.writer;
    if (!w)
      reply.log.info(
        { req: request, res: reply, responseTime: reply.elapsedTime },
        'request completed',
      );
    else if (w.enabled()) w.write(accessLine(w.bindings, request, reply));
  }
}

/**
 * A writer for `log` on `dest` (the stream `log` writes to, made by pino.destination). `base` is the
 * `base` option `log` was made with (pino's `bindings()` leaves it out).
 */
export function accessWriter(
  log: { bindings(): object; isLevelEnabled(level: string): boolean },
  dest: { write(s: string): unknown },
  base: object,
): AccessWriter {
  return {
    bindings: JSON.stringify({ ...base, ...log.bindings() }).slice(1, -1),
    enabled: () => log.isLevelEnabled('info'),
    write: (line) => {
      dest.write(line);
    },
  };
}

/**
 * Access lines gathered into chunks of about CHUNK_CHARS before they reach the destination. Handing
 * sonic-boom one line at a time cost a poll 2 µs of CPU a line more than this: with a `minLength`, it
 * measures the UTF-8 length of its whole pending buffer on every write (flattening the string built so
 * far), so a line costs in proportion to the buffer it joins. Here a line is one string concatenation;
 * a chunk is converted to bytes once, and handed over as bytes (the destination is in sonic-boom's
 * `buffer` mode: given strings, it measured each chunk's UTF-8 length twice before converting it).
 *
 * Order is kept: the logger's own lines go through `before` (pino's `streamWrite` hook, whose result
 * pino hands to the destination as is), which puts the access lines gathered so far in front of them.
 * `flush()` hands over what is pending (the process's logger does so on a timer and before every
 * flush of the destination).
 */
export class AccessBatch {
  static readonly CHUNK_CHARS = 60 * 1024;
  private pending = '';

  constructor(private readonly dest: { write(chunk: Buffer): unknown }) {}

  write(line: string): void {
    this.pending += line;
    if (this.pending.length >= AccessBatch.CHUNK_CHARS) this.flush();
  }

  /** pino's `streamWrite` hook: a line of the logger's own, after the access lines before it, as bytes. */
  readonly before = (line: string): string => {
    const out = this.pending + line;
    this.pending = '';
    // pino's type says string; it passes the hook's result to the destination's write() untouched.
    return Buffer.from(out) as unknown as string;
  };

  flush(): void {
    if (this.pending === '') return;
    const out = this.pending;
    this.pending = '';
    this.dest.write(Buffer.from(out));
  }
}

/** The worker's operational server logs no request (probes every few seconds would drown the renders). */
export class NoRequestLog extends LogController {
  constructor() {
    super({ disableRequestLogging: true });
  }
}
