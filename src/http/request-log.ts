// Fastify gives every request a logger of its own (`request.log`: the process's logger with the request
// id bound), made with pino's child() before any hook runs. That cost a poll about 1.5 µs of CPU (an
// object, the bindings serialised, the level set up) for a logger a successful request never writes to:
// its access line is put together by access-log.ts. The logger here makes that child on the first line
// the level lets through, and until then answers from the process's logger's level.
import type { FastifyBaseLogger } from 'fastify';

type Bindings = Record<string, unknown>;
type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
/** The process's logger as pino makes it: it can say whether a level is written. */
type Parent = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

class RequestLog {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: Parent,
    private readonly bindings: Bindings,
  ) {}

  private real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings));
  }

  private line(method: Method, args: unknown[]): void {
    if (this.made === undefined && !this.parent.isLevelEnabled(method)) return;
    const log = this.real();
    Reflect.apply(log[method], log, args);
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.real().level = level;
  }

  fatal(...args: unknown[]) {
    this.line('fatal', args);
  }
  error(...args: unknown[]) {
    this.line('error', args);
  }
  warn(...args: unknown[]) {
    this.line('warn', args);
  }
  info(...args: unknown[]) {
    this.line('info', args);
  }
  debug(...args: unknown[]) {
    this.line('debug', args);
  }
  trace(...args: unknown[]) {
    this.line('trace', args);
  }
  silent() {}

  child(bindings: Bindings, options?: object): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory`: a request's logger made on its first line. A route with logger
 * options of its own (`logLevel`, serializers) gets pino's child at once, as without this factory.
 */
export function requestLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  opts: object,
): FastifyBaseLogger {
  for (const _ in opts) return logger.child(bindings, opts);
  if (typeof (logger as Partial<Parent>).isLevelEnabled !== 'function')
    return logger.child(bindings, opts);
  return new RequestLog(logger as Parent, bindings);
}
