// Composition root: database, migrations, catalog, storage and backends, then the HTTP server and/or
// the workers, depending on the role. `close()` is the graceful shutdown.
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import { ConfigError, type Config, type Role } from './config.ts';
import { resolveAdminToken } from './http/admin/admin-token.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded.ts';
import { createPool, type Db } from './db/pool.ts';
import { migrate } from './db/migrate.ts';
import { loadCatalog } from './domain/catalog-load.ts';
import type { Catalog } from './domain/catalog-load.ts';
import { createBackends } from './backends/registry.ts';
import type { ModelBackend } from './backends/types.ts';
import { createStorage } from './storage/index.ts';
import type { Storage } from './storage/storage.ts';
import { ApiKeys, KeyResolver } from './services/keys.ts';
import { Accounts } from './services/accounts.ts';
import { Ledger } from './services/ledger.ts';
import { OpsProbe } from './services/ops.ts';
import { Sessions } from './services/sessions.ts';
import { StudioAccounts } from './services/studio-accounts.ts';
import { registerStudio } from './studio/index.ts';
import { RateLimits } from './services/rate-limits.ts';
import { GenerationCache } from './services/generation-cache.ts';
import { AfterCommitNotifier } from './db/notify-after-commit.ts';
import { JOBS_CHANNEL } from './db/channels.ts';
import { Generations } from './services/generations.ts';
import { buildServer } from './http/server.ts';
import { Worker } from './queue/worker.ts';
import { Janitor } from './queue/janitor.ts';
import { Metrics } from './metrics/metrics.ts';
import { buildOpsServer } from './http/ops-server.ts';
import { VERSION } from './domain/version.ts';
import { Uploads } from './services/uploads.ts';
import { Waiters } from './services/waiters.ts';
import { WebhookEndpoints } from './services/webhook-endpoints.ts';
import { snapshotView } from './services/generation-view.ts';
import { uploadReader } from './queue/upload-reader.ts';
import { WebhookDispatcher } from './webhooks/dispatcher.ts';

export interface Infra { log: Logger; db: Db; url: string; catalog: Catalog; storage: Storage; close: () => Promise<void> }

/** Database (embedded or external, migrated), catalog and storage: what every command needs. */
export async function openInfra(config: Config, log: Logger): Promise<Infra> {
  const catalog = loadCatalog(config.catalogPath ?? undefined);
  let embedded: EmbeddedPostgres | null = null;
  if (!config.databaseUrl) embedded = await startEmbeddedPostgres(config.dataDir, (m) => log.info(m));
  const url = config.databaseUrl ?? embedded!.url;
  const db = createPool(url);
  try {
    await migrate(db);
  } catch (e) {
    await db.end();
    await embedded?.stop();
    throw e;
  }
  const storage = createStorage(config.storage);
  return {
    log, db, url, catalog, storage,
    close: async () => {
      await db.end().catch(() => undefined);
      await embedded?.stop();
    },
  };
}

/** `server` is the API (roles serve and api) or the operational endpoints alone (role worker). */
export interface Running { server: FastifyInstance; worker: Worker | null; infra: Infra; close: (graceMs?: number) => Promise<void> }

export async function startService(config: Config, role: Role, opts: { extraBackends?: Record<string, ModelBackend>; log?: Logger } = {}): Promise<Running> {
  // API processes behind a load balancer must all accept the same admin token; one generated into each
  // process's own data dir would make the admin API work on one replica and fail on the others.
  if (role === 'api' && config.databaseUrl && !config.adminToken) {
    throw new ConfigError(['RENDERGATE_ADMIN_TOKEN: required for `api` processes on a shared DATABASE_URL, so that every replica accepts the same token']);
  }
  const log = opts.log ?? pino({ level: config.logLevel });
  const infra = await openInfra(config, log);
  const { db, catalog, storage } = infra;
  const metrics = new Metrics();
  let wake = () => {};
  // A server that comes back wakes the claim loop, so the renders it held back start at once.
  const backends = createBackends(config, catalog, metrics, { extra: opts.extraBackends, onRecover: () => wake(), render: role !== 'api' });
  const { backendFor } = backends;
  // A worker serves no admin API, so it neither needs nor generates a token.
  const adminToken = role === 'worker' ? '' : resolveAdminToken(config, (token, file) => {
    // Printed once, on the start that created it; afterwards it is only in the file.
    process.stdout.write(`\nAdmin token (saved in ${file}; shown only now):\n  ${token}\n\n`);
  });
  if (role !== 'serve' && config.storage.driver === 'file') {
    log.warn({ role, root: config.storage.root }, 'outputs are stored on this machine\'s disk: API and worker processes on other machines cannot see them (use RENDERGATE_STORAGE=s3://… or a shared RENDERGATE_DATA_DIR)');
  }
  // Polls are answered from memory in API processes; a worker answers none.
  const cache = role === 'worker' ? undefined : new GenerationCache(infra.url, 20_000, (m) => log.warn(m));
  await cache?.start();
  // Wakes workers after each create, on one connection of its own with asynchronous commit.
  const wakeDb = role === 'worker' ? null : createPool(infra.url, 1, { asyncCommit: true });
  const uploads = new Uploads(db, storage, config);
  // `Prefer: wait` requests are woken by the cache's change notifications.
  const waiters = new Waiters(config.maxWaiters);
  if (cache) cache.onChange = (id) => waiters.wake(id);
  metrics.heldRequests = () => waiters.size;
  const ledger = new Ledger(db, config.dayTimeZone);
  const jobs = wakeDb ? new AfterCommitNotifier(wakeDb, JOBS_CHANNEL) : undefined;
  const generations = new Generations({ db, catalog, config, storage, ledger, metrics, cache, jobs, uploads, waiters });
  const ctx = {
    config, catalog, keys: new KeyResolver(db, config.keyPrefix), limits: new RateLimits(db), generations, storage,
    adminToken, metrics, uploads, webhooks: new WebhookEndpoints(db), accounts: new Accounts(db),
    apiKeys: new ApiKeys(db, config.keyPrefix, config.defaultRateLimitPerMinute), ops: new OpsProbe(db),
    backendHealth: role === 'api' ? undefined : backends.health,
  };
  // The studio's pages at `/`, a sibling of the API in the same server (http/ and studio/ never import
  // each other).
  const studio = { sessions: new Sessions(db), studioAccounts: new StudioAccounts(db, config.publicUrl) };
  // A worker listens too, for /healthz, /readyz and /metrics only. Listening comes first, so that a
  // port already taken stops the start before any render is claimed.
  const server: FastifyInstance = role === 'worker' ? buildOpsServer(ctx, log)
    : buildServer(ctx, log, [(scope) => registerStudio(scope, ctx, studio)]);
  try {
    await server.listen({ port: config.port, host: config.host });
  } catch (e) {
    await cache?.stop();
    await wakeDb?.end().catch(() => undefined);
    await infra.close();
    throw e;
  }
  let worker: Worker | null = null;
  let janitor: Janitor | null = null;
  let claimDb: Db | null = null;
  let dispatcher: WebhookDispatcher | null = null;
  let webhookDb: Db | null = null;
  if (role !== 'api') {
    claimDb = createPool(infra.url, 3, { asyncCommit: true });
    const pools = new Map([...backends.pools].map(([model, pool]) => [model, { ...pool, healthy: (url: string) => backends.health.isHealthy(url) }]));
    worker = new Worker({
      db, claimDb, ledger, databaseUrl: infra.url, catalog, backendFor, storage, concurrency: config.workerConcurrency,
      accountConcurrency: config.accountConcurrency, log, metrics, pools,
      readUpload: uploadReader(db, storage, config.publicUrl), outputRetentionSeconds: config.outputRetentionSeconds,
    });
    janitor = new Janitor({ db, storage, log, ledger });
    wake = () => worker?.fill();
    // Asynchronous commits: a delivery's record lost in a database crash means it is sent again, which
    // at-least-once delivery allows; waiting for a WAL flush per delivery would cap throughput.
    webhookDb = createPool(infra.url, 4, { asyncCommit: true });
    dispatcher = new WebhookDispatcher({
      db: webhookDb, databaseUrl: infra.url, log, retrySeconds: config.webhookRetrySeconds, allowPrivateUrls: config.allowPrivateUrls,
      view: (snap) => snapshotView(snap, config.publicUrl),
    });
    await backends.health.start(); // the first probes decide which servers the first claims may use
    await worker.start();
    await dispatcher.start();
    janitor.start();
  }
  log.info({ role, version: VERSION, port: config.port, dataDir: path.relative(process.cwd(), config.dataDir) || '.' }, 'rendergate is running');
  return {
    server, worker, infra,
    close: async (graceMs = config.shutdownGraceMs) => {
      await server.close();
      await worker?.stop(graceMs);
      await dispatcher?.stop();
      await webhookDb?.end().catch(() => undefined);
      await backends.health.stop();
      await janitor?.stop();
      await claimDb?.end().catch(() => undefined);
      await cache?.stop();
      await wakeDb?.end().catch(() => undefined);
      await infra.close();
    },
  };
}
