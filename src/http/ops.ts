// Operational endpoints outside /v1: liveness, readiness (database, migrations, storage, catalog, the
// event loop) and Prometheus metrics. They carry no account data and need no key; /metrics needs the
// metrics token when RENDERGATE_METRICS_TOKEN is set.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import { VERSION } from '../domain/version.ts';
import type { Ctx } from '../web/context.ts';

/** The queue gauges are counted at most this often, however often /metrics is scraped (or by whom). */
const QUEUE_COUNT_EVERY_MS = 5_000;

const sha = (s: string) => crypto.createHash('sha256').update(s).digest();

function metricsAllowed(req: FastifyRequest, expected: Buffer | null): boolean {
  if (expected === null) return true;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m !== null && crypto.timingSafeEqual(sha(m[1]), expected);
}

export function registerOps(app: FastifyInstance, ctx: Ctx) {
  const metricsToken = ctx.config.metricsToken === null ? null : sha(ctx.config.metricsToken);
  let queueCounted: { at: number; done: Promise<void> } | null = null;
  const countQueue = async () => {
    try {
      const { waiting, running } = await ctx.ops.queueCounts();
      ctx.metrics.queueDepth.set(waiting);
      ctx.metrics.running.set(running);
    } catch {
      /* the database is away: report the process metrics anyway */
    }
  };

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async () => {
    const checks: Record<string, string> = { catalog: `${ctx.catalog.models.length} models` };
    const problems: string[] = [];
    try {
      const pending = await ctx.ops.pendingMigrations();
      checks.database = 'ok';
      checks.migrations = pending.length === 0 ? 'ok' : `pending: ${pending.join(', ')}`;
      if (pending.length > 0) problems.push('migrations');
    } catch {
      checks.database = 'unreachable';
      problems.push('database');
    }
    try {
      await ctx.storage.check();
      checks.storage = 'ok';
    } catch {
      checks.storage = 'not writable';
      problems.push('storage');
    }
    const loop = ctx.metrics.eventLoop.state();
    checks.eventLoop = loop.stalled
      ? `stalled ${loop.lastStallMs} ms, ${loop.sinceStallMs} ms ago`
      : 'ok';
    if (loop.stalled) problems.push('event loop');
    // Model servers are reported, not required: while one is down its renders wait in the queue.
    const backends = ctx.backendHealth?.snapshot().map((b) => ({
      driver: b.driver,
      url: b.url,
      healthy: b.healthy,
      latencyMs: b.latencyMs,
      error: b.error,
      checkedAt: b.checkedAt,
    }));
    if (problems.length > 0) {
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        `Not ready: ${problems.join(', ')}.`,
        [{ version: VERSION, ...checks }],
        { 'retry-after': '5' },
      );
    }
    // The release answering: during a rolling upgrade an operator sees which replicas run which.
    return {
      status: 'ready',
      version: VERSION,
      checks,
      ...(backends && backends.length > 0 ? { backends } : {}),
    };
  });

  app.get('/metrics', async (req, reply) => {
    if (!metricsAllowed(req, metricsToken)) {
      throw new ApiError(
        'ADMIN_TOKEN_INVALID',
        '/metrics needs "Authorization: Bearer <metrics token>" (RENDERGATE_METRICS_TOKEN).',
      );
    }
    const now = performance.now();
    if (!queueCounted || now - queueCounted.at > QUEUE_COUNT_EVERY_MS)
      queueCounted = { at: now, done: countQueue() };
    await queueCounted.done;
    return reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });
}
