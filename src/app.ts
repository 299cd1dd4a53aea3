// Composition root: the infrastructure (cli/infra.ts: database, migrations, catalog, storage), backends,
// then the HTTP server and/or the workers, depending on the role. `close()` is the graceful shutdown.
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import { ConfigError, type Config, type Role } from './config.ts';
import { openInfra, type Infra } from './cli/infra.ts';
import { resolveAdminToken } from './http/admin/admin-token.ts';
import { createPool, type Db } from './db/pool.ts';
import { createBackends } from './backends/registry.ts';
import type { ModelBackend } from './backends/types.ts';
import { ApiKeys } from './services/keys.ts';
import { Members } from './services/members.ts';
import { smtpMailer } from './services/mail.ts';
import { KeyResolver } from './services/key-resolver.ts';
import { Accounts } from './services/accounts.ts';
import { Budgets } from './services/budgets.ts';
import { Usage } from './services/usage.ts';
import { Ledger } from './ledger/ledger.ts';
import { OpsProbe } from './services/ops.ts';
import { Sessions } from './services/sessions.ts';
import { StudioAccounts } from './services/studio-accounts.ts';
import { SecondFactor } from './services/second-factor.ts';
import { SignInSteps } from './services/sign-in-steps.ts';
import { Sso } from './services/sso.ts';
import { PasswordWork } from './services/passwords.ts';
import { registerStudio } from './studio/index.ts';
import { History } from './services/history.ts';
import { RateLimits } from './admission/rate-limits.ts';
import { SessionCache } from './services/session-cache.ts';
import { GenerationCache } from './services/generation-cache.ts';
import { Generations } from './services/generations.ts';
import { buildServer } from './http/server.ts';
import type { AccessWriter } from './http/access-log.ts';
import { Worker } from './queue/worker.ts';
import { JobWake } from './queue/job-wake.ts';
import { RecordingHere } from './queue/recording-here.ts';
import { Janitor } from './queue/janitor.ts';
import { Metrics } from './metrics/metrics.ts';
import { buildOpsServer } from './http/ops-server.ts';
import { VERSION } from './domain/version.ts';
import { Uploads } from './services/uploads.ts';
import { Waiters } from './admission/waiters.ts';
import { WebhookEndpoints } from './services/webhook-endpoints.ts';
import { AuditLog } from './services/audit-log.ts';
import { snapshotView } from './services/generation-view.ts';
import { uploadReader } from './queue/upload-reader.ts';
import { WebhookDispatcher } from './webhooks/dispatcher.ts';
import { AlertNotices } from './services/alert-notices.ts';
import { recordPublicUrl } from './services/server-info.ts';
import { ChatCompletions } from './services/chat.ts';
import { LiveText } from './queue/live-text.ts';
import { LiveTextRelay } from './queue/live-text-relay.ts';
import { TestRenders } from './queue/test-render.ts';
import { createTopups } from './services/topups.ts';
import { Receipts } from './services/receipts.ts';
import { Billing } from './services/billing.ts';
import { RefusalPace } from './admission/refusal-pace.ts';
import { BodyBudget } from './admission/body-budget.ts';
import { openApiSections } from './http/openapi/document.ts';

export { openInfra, type Infra };

/** `server` is the API (roles serve and api) or the operational endpoints alone (role worker). */
export interface Running {
  server: FastifyInstance;
  worker: Worker | null;
  infra: Infra;
  close: (graceMs?: number) => Promise<void>;
}

export async function startService(
  config: Config,
  role: Role,
  opts: {
    extraBackends?: Record<string, ModelBackend>;
    log?: Logger;
    access?: AccessWriter | null;
    /** Tests: called before each test render is recorded (test-render.ts). */
    beforeTestRender?: (id: string) => Promise<void>;
  } = {},
): Promise<Running> {
  // API processes behind a load balancer must all accept the same admin token; one generated into each
  // process's own data dir would make the admin API work on one replica and fail on the others.
  if (role === 'api' && config.databaseUrl && !config.adminToken) {
    throw new ConfigError([
      'RENDERGATE_ADMIN_TOKEN: required for `api` processes on a shared DATABASE_URL, so that every replica accepts the same token',
    ]);
  }
  const log = opts.log ?? pino({ level: config.logLevel });
  const infra = await openInfra(config, log);
  const { db, catalog, storage } = infra;
  const metrics = new Metrics();
  let wake = () => {};
  // A server that comes back wakes the claim loop, so the renders it held back start at once.
  const backends = createBackends(config, catalog, metrics, {
    extra: opts.extraBackends,
    onRecover: () => wake(),
    render: role !== 'api',
  });
  const { backendFor } = backends;
  // A worker serves no admin API, so it neither needs nor generates a token.
  const adminToken =
    role === 'worker'
      ? ''
      : resolveAdminToken(config, (token, file) => {
          // Printed once, on the start that created it; afterwards it is only in the file.
          process.stdout.write(
            `\nAdmin token (saved in ${file}; shown only now):\n  ${token}\n` +
              `The studio, once started: open ${config.publicUrl}/ in a browser to sign up.\n\n`,
          );
        });
  if (role !== 'serve' && config.storage.driver === 'file') {
    log.warn(
      { role, root: config.storage.root },
      "outputs are stored on this machine's disk: API and worker processes on other machines cannot see them (use RENDERGATE_STORAGE=s3://… or a shared RENDERGATE_DATA_DIR)",
    );
  }
  // Polls are answered from memory in API processes; a worker answers none.
  const cache =
    role === 'worker' ? undefined : new GenerationCache(infra.url, 20_000, (m) => log.warn(m));
  await cache?.start();
  // Signed-in pages are answered without asking the database who is signed in (session-cache.ts).
  const sessionCache =
    role === 'worker' ? null : new SessionCache(infra.url, 10_000, (m) => log.warn(m));
  await sessionCache?.start();
  // Wakes workers after each create, on one connection of its own with asynchronous commit.
  const wakeDb = role === 'worker' ? null : createPool(infra.url, 1, { asyncCommit: true });
  const uploads = new Uploads(db, storage, config);
  // `Prefer: wait` requests are woken by the cache's change notifications, which also carry the text
  // of chat renders of other processes (live-text.ts).
  const waiters = new Waiters(config.maxWaiters);
  // Live event streams, bounded apart from held requests (a tenth of the most per account).
  const streams = new Waiters(config.maxWaiters);
  // Chat renders stream their text to the /openai/v1 answers of this process, or through the relay.
  const liveText = new LiveText();
  // The held requests and event streams of a render (null: of every render).
  const wakeHeld = (id: string | null) => {
    waiters.wake(id);
    streams.wake(id);
  };
  // A change heard while this process's worker records that render's outcome: woken by the
  // worker once its statement has answered (recording-here.ts); the cache dropped its copy already.
  const recording = new RecordingHere((id) => setImmediate(wakeHeld, id));
  if (cache)
    cache.onChange = (id) => {
      if (id === null || !liveText.receive(id)) {
        if (id !== null && recording.hold(id)) return;
        wakeHeld(id);
      }
    };
  metrics.heldRequests = () => waiters.size;
  metrics.eventStreams = () => streams.size;
  const ledger = new Ledger(db, config.dayTimeZone);
  const jobs = wakeDb ? new JobWake(wakeDb) : undefined;
  // Test keys' renders are made by the API process that creates them (a worker makes none).
  const testRenders =
    role === 'worker'
      ? undefined
      : new TestRenders({
          db,
          catalog,
          storage,
          log,
          ledger,
          outputRetentionSeconds: config.outputRetentionSeconds,
          beforeFinish: opts.beforeTestRender,
          backendFor,
          addresses: { allowPrivate: config.allowPrivateUrls, publicUrl: config.publicUrl },
        });
  const generations = new Generations({
    db,
    catalog,
    config,
    storage,
    ledger,
    metrics,
    cache,
    jobs,
    uploads,
    waiters,
    streams,
    testRenders,
  });
  const keys = new KeyResolver(db, config.keyPrefix);
  // Keys in use are kept until a change is heard (key-resolver.ts); a worker resolves none.
  if (role !== 'worker') await keys.listen(infra.url, (m) => log.warn(m));
  // invitations and money notices go out by mail where SMTP is set up
  const mailer = config.smtpUrl ? smtpMailer(config.smtpUrl, config.mailFrom) : null;
  const ctx = {
    chat: new ChatCompletions(catalog, generations, liveText),
    config,
    catalog,
    keys,
    limits: new RateLimits(db),
    generations,
    storage,
    adminToken,
    metrics,
    uploads,
    webhooks: new WebhookEndpoints(db, config.allowPrivateUrls),
    auditLog: new AuditLog(db),
    accounts: new Accounts(db),
    budgets: new Budgets(db, config.dayTimeZone),
    usage: new Usage(db, config.dayTimeZone),
    sessionCache,
    apiKeys: new ApiKeys(db, config.keyPrefix, config.defaultRateLimitPerMinute, keys),
    // invitations go out by the studio's mail where SMTP is set up
    members: new Members(db, config.publicUrl, mailer, keys, log),
    ops: new OpsProbe(db),
    backendHealth: role === 'api' ? undefined : backends.health,
    topups: createTopups({ db, config, waiters, log, mailer }),
    billing: new Billing(db),
    receipts: new Receipts(db, config.billing),
    pace: new RefusalPace({ burst: config.refusalPaceBurst, delayMs: config.refusalPaceMs }),
    // four bodies at the limit at once, then the account's bytes a second
    bodies: new BodyBudget(db, config.bodyBytesPerSecond, 4 * config.bodyLimitBytes),
  };
  // The studio's pages at `/`, a sibling of the API in the same server (http/ and studio/ never import
  // each other).
  const passwords = new PasswordWork(config.passwordChecksAtOnce);
  const studio = {
    sessions: new Sessions(db, { adminToken, perAccount: config.sessionsPerAccount }, sessionCache),
    studioAccounts: new StudioAccounts(
      db,
      config.publicUrl,
      passwords,
      config.billing.signupCreditCents,
    ),
    history: new History(db, config.publicUrl),
    secondFactor: new SecondFactor(db),
    signInSteps: new SignInSteps(db, config.publicUrl),
    sso: config.oidc ? new Sso(db, config.oidc, config.publicUrl, config.signupOpen) : null,
    apiSections: openApiSections(catalog, config.publicUrl),
  };
  let studioNotFound: Awaited<ReturnType<typeof registerStudio>> | undefined;
  // A worker listens too, for /healthz, /readyz and /metrics only. Listening comes first, so that a
  // port already taken stops the start before any render is claimed.
  const server: FastifyInstance =
    role === 'worker'
      ? buildOpsServer(ctx, log)
      : buildServer(
          ctx,
          log,
          [
            async (scope) => {
              studioNotFound = await registerStudio(scope, ctx, studio);
            },
          ],
          opts.access ?? null,
          (req, reply) => studioNotFound!(req, reply),
        );
  try {
    await server.listen({ port: config.port, host: config.host });
  } catch (e) {
    await cache?.stop();
    await sessionCache?.stop();
    await wakeDb?.end().catch(() => undefined);
    await infra.close();
    throw e;
  }
  // The operator's command line prints links with the URL the server itself uses.
  if (role !== 'worker') await recordPublicUrl(db, config.publicUrl);
  let worker: Worker | null = null;
  let janitor: Janitor | null = null;
  let claimDb: Db | null = null;
  let stopRelay = () => {};
  let dispatcher: WebhookDispatcher | null = null;
  let alerts: AlertNotices | null = null;
  let webhookDb: Db | null = null;
  // Auto-recharge's runner, in every worker (services/auto-recharge-run.ts).
  const recharges = role === 'api' ? null : (ctx.topups?.recharges(infra.url) ?? null);
  if (role !== 'api') {
    claimDb = createPool(infra.url, 3, { asyncCommit: true });
    const relay = new LiveTextRelay({ db: claimDb });
    liveText.relayTo(relay);
    stopRelay = () => relay.flush();
    const pools = new Map(
      [...backends.pools].map(([model, pool]) => [
        model,
        { ...pool, healthy: (url: string) => backends.health.isHealthy(url) },
      ]),
    );
    worker = new Worker({
      db,
      claimDb,
      ledger,
      databaseUrl: infra.url,
      catalog,
      backendFor,
      storage,
      concurrency: config.workerConcurrency,
      accountConcurrency: config.accountConcurrency,
      log,
      metrics,
      pools,
      readUpload: uploadReader(db, storage, config.publicUrl),
      outputRetentionSeconds: config.outputRetentionSeconds,
      liveText,
      textOutputLimitBytes: config.textOutputLimitBytes,
      jobWake: jobs,
      onFinal: (id) => {
        generations.forget(id);
        // After what the outcome set off in this process (a chat answer, in microtasks), which
        // then has no waiter left to read the row again.
        setImmediate(wakeHeld, id);
      },
      recording,
    });
    janitor = new Janitor({ db, storage, log, ledger });
    wake = () => worker?.fill();
    // Asynchronous commits: a delivery's record lost in a database crash means it is sent again, which
    // at-least-once delivery allows; waiting for a WAL flush per delivery would cap throughput. Generic
    // plans: the claim runs at every render's end and took longer to plan (0.10-0.14 ms) than to run
    // (0.17 ms); its plan reads only endpoints with room whatever its values (claim-cost.test.ts).
    webhookDb = createPool(infra.url, 4, { asyncCommit: true, genericPlans: true });
    dispatcher = new WebhookDispatcher({
      db: webhookDb,
      databaseUrl: infra.url,
      log,
      retrySeconds: config.webhookRetrySeconds,
      allowPrivateUrls: config.allowPrivateUrls,
      view: (snap) => snapshotView(snap, config.publicUrl),
    });
    await backends.cogReceiver?.listen(); // the Cog webhook receiver's port, taken before any render
    await backends.health.start(); // the first probes decide which servers the first claims may use
    await worker.start();
    await dispatcher.start();
    // mailed where SMTP is set up; audited either way
    alerts = new AlertNotices(db, mailer, log);
    alerts.start();
    janitor.start();
    await recharges?.start();
  }
  // The address to open, in the line itself: a first start's reader looks for it there.
  const open = role === 'worker' ? '' : `: open ${config.publicUrl}/ in a browser`;
  log.info(
    {
      role,
      version: VERSION,
      port: config.port,
      url: role === 'worker' ? undefined : config.publicUrl,
      dataDir: path.relative(process.cwd(), config.dataDir) || '.',
    },
    `rendergate is running${open}`,
  );
  return {
    server,
    worker,
    infra,
    close: async (graceMs = config.shutdownGraceMs) => {
      await server.close();
      await passwords.close();
      await testRenders?.close();
      await worker?.stop(graceMs);
      await recharges?.stop();
      stopRelay(); // the last pieces, before the claim pool closes
      await dispatcher?.stop();
      await alerts?.stop();
      await webhookDb?.end().catch(() => undefined);
      await backends.health.stop();
      await backends.cogReceiver?.close();
      await janitor?.stop();
      await claimDb?.end().catch(() => undefined);
      await cache?.stop();
      await sessionCache?.stop();
      await keys.stop();
      await wakeDb?.end().catch(() => undefined);
      await infra.close();
    },
  };
}
