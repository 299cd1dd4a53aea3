// Operational endpoints outside /v1: liveness, readiness (database, migrations, storage, catalog) and
// Prometheus metrics. They carry no account data and need no key.
import type { FastifyInstance } from 'fastify';
import { pendingMigrations } from '../db/migrate.ts';
import { ApiError } from '../domain/errors.ts';
import { VERSION } from '../domain/version.ts';
import type { Ctx } from './context.ts';

export function registerOps(app: FastifyInstance, ctx: Ctx) {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async () => {
    const checks: Record<string, string> = { catalog: `${ctx.catalog.models.length} models` };
    const problems: string[] = [];
    try {
      const pending = await pendingMigrations(ctx.db);
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
    if (problems.length > 0) {
      throw new ApiError('SERVICE_UNAVAILABLE', `Not ready: ${problems.join(', ')}.`, [{ version: VERSION, ...checks }], { 'retry-after': '5' });
    }
    // The release answering: during a rolling upgrade an operator sees which replicas run which.
    return { status: 'ready', version: VERSION, checks };
  });

  app.get('/metrics', async (_req, reply) => {
    try {
      const { rows } = await ctx.db.query(
        `SELECT count(*) FILTER (WHERE lease_until IS NULL OR lease_until < now())::int AS waiting,
                count(*) FILTER (WHERE lease_until >= now())::int AS running
         FROM generations WHERE status = 'queued'`);
      ctx.metrics.queueDepth.set(rows[0].waiting);
      ctx.metrics.running.set(rows[0].running);
    } catch { /* the database is away: report the process metrics anyway */ }
    return reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });
}
