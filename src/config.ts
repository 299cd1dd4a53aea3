// Environment → one validated, frozen configuration, parsed once at boot. Every bad variable is
// reported together, so an operator fixes them in one go.
import os from 'node:os';
import path from 'node:path';
import { envReader } from './config/env-reader.ts';
import { stripeConfig, type StripeConfig } from './config/stripe.ts';
import { billingConfig, type BillingConfig } from './config/billing.ts';
import { oidcConfig, type OidcConfig } from './config/oidc.ts';

export type StorageConfig =
  { driver: 'file'; root: string } | { driver: 's3'; bucket: string; prefix: string };
export type Role = 'serve' | 'api' | 'worker';

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  databaseUrl: string | null;
  adminToken: string | null;
  catalogPath: string | null;
  allowPrivateUrls: boolean;
  dayTimeZone: string;
  storage: StorageConfig;
  keyPrefix: string;
  defaultRateLimitPerMinute: number;
  bodyLimitBytes: number;
  /** An account's request bodies over 16 KiB, bytes a second (admission/body-budget.ts). */
  bodyBytesPerSecond: number;
  workerConcurrency: number;
  shutdownGraceMs: number;
  requestTimeoutMs: number;
  /** Polls answered before the framework (src/http/fast-answers.ts); off: Fastify answers all. */
  fastAnswers: boolean;
  logLevel: string;
  /** Renders of one account running at once across the cluster (0: no limit). */
  accountConcurrency: number;
  /**
   * Time one render attempt may spend fetching its input images (they are fetched at once, so this
   * bounds the attempt's fetching). A render whose fetches time out on two attempts fails for good.
   */
  fetchTimeoutMs: number;
  /** When set, /metrics answers only with `Authorization: Bearer <this token>`. */
  metricsToken: string | null;
  /** Uploads (docs/api.md "Uploads"), retention, `Prefer: wait` and webhooks. */
  uploadLimitBytes: number;
  uploadRetentionSeconds: number;
  /** 0 = outputs are kept forever. */
  outputRetentionSeconds: number;
  maxWaiters: number;
  /** Between the comment lines that keep a render's event stream open (docs/api.md "Live events"). */
  eventKeepAliveMs: number;
  webhookRetrySeconds: number[];
  /** Seconds between health checks of each model server of the catalog (src/backends/health.ts). */
  backendHealthIntervalMs: number;
  /** Largest result file a model server may send; a bigger one fails the render. */
  backendOutputLimitBytes: number;
  /** Studio: self sign-up allowed; SMTP server for password-reset mail (null: operators print reset links). */
  signupOpen: boolean;
  smtpUrl: string | null;
  mailFrom: string;
  /** Abuse limits of uploads, keys, sessions and sign-ups (docs/account-limits.md). */
  uploadQuotaBytes: number;
  uploadQuotaCount: number;
  /** An account's uploads decoded and stored a second, after a burst of as many (admission/upload-turns.ts). */
  uploadsPerSecond: number;
  /** The highest rate limit an account owner may give a key (the admin API may set any). */
  maxRateLimitPerMinute: number;
  signupsPerHour: number;
  /** Requests at the studio's doors per address and minute, decided in memory (0: no limit). */
  studioDoorRequestsPerMinute: number;
  /** Refusals that keep coming (admission/refusal-pace.ts): a scope's burst answered at once, then each this late (0: never late). */
  refusalPaceBurst: number;
  refusalPaceMs: number;
  /** Argon2 hashes and checks at once per process (services/passwords.ts PasswordWork). */
  passwordChecksAtOnce: number;
  keysPerAccount: number;
  sessionsPerAccount: number;
  /**
   * Cog live progress (src/backends/cog/async.ts): the worker's address as Cog containers see it; with
   * it, Cog predictions run asynchronously and report to a receiver the worker listens with on this
   * URL's port. Null: synchronous predictions. `cogPollMs`: how often a running prediction is also read.
   */
  workerCallbackUrl: string | null;
  cogPollMs: number;
  /** Abuse limits (docs/api.md): the most text one render may answer, in bytes (UTF-8). */
  textOutputLimitBytes: number;
  /** Stripe Checkout top-ups (docs/billing.md); null without both secrets. */
  stripe: StripeConfig | null;
  /** Receipts' issuer, auto-recharge's daily bound, help at €0, the sign-up credit. */
  billing: BillingConfig;
  /** Single sign-on through an OpenID Provider (docs/operations.md); null when not set up. */
  oidc: OidcConfig | null;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const { int, flag, duration } = envReader(env, problems);

  const port = int('PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const dataDir = path.resolve(env.RENDERGATE_DATA_DIR || './data');

  let publicUrl = env.RENDERGATE_PUBLIC_URL || `http://localhost:${port}`;
  try {
    const u = new URL(publicUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    publicUrl = publicUrl.replace(/\/+$/, '');
  } catch {
    problems.push(
      `RENDERGATE_PUBLIC_URL=${JSON.stringify(publicUrl)}: must be an absolute http(s) URL`,
    );
  }

  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    problems.push('DATABASE_URL: must be a postgres:// URL');

  const adminToken = env.RENDERGATE_ADMIN_TOKEN || null;
  if (adminToken !== null && adminToken.length < 16)
    problems.push('RENDERGATE_ADMIN_TOKEN: must be at least 16 characters');

  const dayTimeZone = env.RENDERGATE_DAY_TIMEZONE || 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: dayTimeZone });
  } catch {
    problems.push(`RENDERGATE_DAY_TIMEZONE=${JSON.stringify(dayTimeZone)}: not an IANA time zone`);
  }

  let storage: StorageConfig = { driver: 'file', root: path.join(dataDir, 'files') };
  const rawStorage = env.RENDERGATE_STORAGE || 'file';
  if (rawStorage.startsWith('s3://')) {
    const rest = rawStorage.slice(5);
    const slash = rest.indexOf('/');
    const bucket = slash < 0 ? rest : rest.slice(0, slash);
    const prefix = slash < 0 ? '' : rest.slice(slash + 1).replace(/\/+$/, '');
    if (!bucket) problems.push('RENDERGATE_STORAGE: s3://bucket/prefix needs a bucket');
    storage = { driver: 's3', bucket, prefix };
  } else if (rawStorage !== 'file') {
    problems.push(
      `RENDERGATE_STORAGE=${JSON.stringify(rawStorage)}: must be "file" or s3://bucket/prefix`,
    );
  }

  const keyPrefix = env.RENDERGATE_KEY_PREFIX || 'rg_';
  if (!/^[a-z0-9]{1,12}_$/.test(keyPrefix))
    problems.push('RENDERGATE_KEY_PREFIX: lowercase letters and digits ending in "_"');

  const metricsToken = env.RENDERGATE_METRICS_TOKEN || null;
  if (metricsToken !== null && metricsToken.length < 16)
    problems.push('RENDERGATE_METRICS_TOKEN: must be at least 16 characters');
  const rawRetry =
    env.RENDERGATE_WEBHOOK_RETRY_SECONDS || '5,30,120,600,1800,3600,7200,14400,28800,43200';
  const webhookRetrySeconds = rawRetry.split(',').map((x) => Number(x.trim()));
  if (
    webhookRetrySeconds.length > 50 ||
    webhookRetrySeconds.some((x) => !Number.isInteger(x) || x < 0 || x > 7 * 86400)
  ) {
    problems.push(
      `RENDERGATE_WEBHOOK_RETRY_SECONDS=${JSON.stringify(rawRetry)}: comma-separated whole seconds (0 to 604800), at most 50`,
    );
  }

  const workerCallbackUrl = (env.RENDERGATE_WORKER_CALLBACK_URL || '').replace(/\/+$/, '') || null;
  if (workerCallbackUrl !== null && !/^http:\/\/[^/?#]+:\d+(\/[^?#]*)?$/.test(workerCallbackUrl)) {
    problems.push(
      'RENDERGATE_WORKER_CALLBACK_URL: must be http://host:port[/path], the worker as Cog containers reach it',
    );
  }
  const cogPollMs = int('RENDERGATE_COG_POLL_MS', 2000, 50, 60_000);
  const config: Config = {
    port,
    host,
    publicUrl,
    dataDir,
    databaseUrl,
    adminToken,
    catalogPath: env.RENDERGATE_CATALOG ? path.resolve(env.RENDERGATE_CATALOG) : null,
    allowPrivateUrls: flag('RENDERGATE_ALLOW_PRIVATE_URLS'),
    dayTimeZone,
    storage,
    keyPrefix,
    defaultRateLimitPerMinute: int('RENDERGATE_RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    bodyLimitBytes: int('RENDERGATE_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    bodyBytesPerSecond: int('RENDERGATE_BODY_BYTES_PER_SECOND', 2 * 1024 * 1024, 1024, 2 ** 30),
    workerConcurrency: int('RENDERGATE_WORKER_CONCURRENCY', 2, 0, 256),
    // below the 10 s most supervisors wait between SIGTERM and SIGKILL
    // a request (headers and body) must arrive within this: a client dribbling bytes is dropped
    requestTimeoutMs: int('RENDERGATE_REQUEST_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
    shutdownGraceMs: int('RENDERGATE_SHUTDOWN_GRACE_SECONDS', 7, 0, 3600) * 1000,
    fastAnswers: !flag('RENDERGATE_NO_FAST_ANSWERS'),
    logLevel: env.LOG_LEVEL || 'info',
    accountConcurrency: int('RENDERGATE_ACCOUNT_CONCURRENCY', 4, 0, 100_000),
    metricsToken,
    fetchTimeoutMs: int('RENDERGATE_FETCH_TIMEOUT_SECONDS', 20, 1, 600) * 1000,
    uploadLimitBytes: int(
      'RENDERGATE_UPLOAD_LIMIT_BYTES',
      20 * 1024 * 1024,
      1024,
      1024 * 1024 * 1024,
    ),
    uploadRetentionSeconds: duration('RENDERGATE_UPLOAD_RETENTION', '7d', false),
    outputRetentionSeconds: duration('RENDERGATE_OUTPUT_RETENTION', '30d', true),
    // held `Prefer: wait` requests per process; more are answered at once, as without the header
    maxWaiters: int('RENDERGATE_MAX_WAITERS', 10_000, 0, 1_000_000),
    // a comment line this often keeps proxies from closing an event stream that has nothing to say
    eventKeepAliveMs: int('RENDERGATE_EVENT_KEEPALIVE_MS', 15_000, 10, 3_600_000),
    webhookRetrySeconds,
    backendHealthIntervalMs: int('RENDERGATE_BACKEND_HEALTH_SECONDS', 5, 1, 3600) * 1000,
    backendOutputLimitBytes: int(
      'RENDERGATE_BACKEND_OUTPUT_LIMIT_BYTES',
      2 * 1024 ** 3,
      1024,
      Number.MAX_SAFE_INTEGER,
    ),
    signupOpen: (env.RENDERGATE_SIGNUP || 'open') === 'open',
    smtpUrl: env.RENDERGATE_SMTP_URL || null,
    mailFrom: env.RENDERGATE_MAIL_FROM || 'Rendergate <no-reply@localhost>',
    uploadQuotaBytes: int('RENDERGATE_UPLOAD_QUOTA_BYTES', 1024 ** 3, 0, Number.MAX_SAFE_INTEGER),
    uploadQuotaCount: int('RENDERGATE_UPLOAD_QUOTA_COUNT', 1000, 0, 1_000_000_000),
    uploadsPerSecond: int('RENDERGATE_UPLOADS_PER_SECOND', 5, 1, 1_000_000),
    maxRateLimitPerMinute: int('RENDERGATE_MAX_RATE_LIMIT_PER_MINUTE', 6000, 1, 1_000_000),
    signupsPerHour: int('RENDERGATE_SIGNUPS_PER_HOUR', 10, 0, 1_000_000),
    studioDoorRequestsPerMinute: int(
      'RENDERGATE_STUDIO_DOOR_REQUESTS_PER_MINUTE',
      600,
      0,
      1_000_000,
    ),
    refusalPaceBurst: int('RENDERGATE_REFUSAL_PACE_BURST', 20, 1, 1_000_000),
    refusalPaceMs: int('RENDERGATE_REFUSAL_PACE_MS', 1000, 0, 10_000),
    // half the cores: the other half stays with the API's requests and the database
    passwordChecksAtOnce: int(
      'RENDERGATE_PASSWORD_CHECKS_AT_ONCE',
      Math.max(1, Math.floor(os.availableParallelism() / 2)),
      1,
      1024,
    ),
    keysPerAccount: int('RENDERGATE_KEYS_PER_ACCOUNT', 100, 1, 1_000_000),
    sessionsPerAccount: int('RENDERGATE_SESSIONS_PER_ACCOUNT', 20, 1, 1_000_000),
    workerCallbackUrl,
    cogPollMs,
    // issue 20 (abuse limits): a bigger text fails the render with OUTPUT_TOO_LARGE, refunded
    textOutputLimitBytes: int(
      'RENDERGATE_TEXT_OUTPUT_LIMIT_BYTES',
      1024 * 1024,
      1024,
      64 * 1024 * 1024,
    ),
    stripe: stripeConfig(env, problems),
    billing: billingConfig(env, problems),
    oidc: oidcConfig(env, problems),
  };
  if (!['open', 'closed'].includes(env.RENDERGATE_SIGNUP || 'open'))
    problems.push(
      `RENDERGATE_SIGNUP=${JSON.stringify(env.RENDERGATE_SIGNUP)}: must be open or closed`,
    );
  if (config.smtpUrl && !/^smtps?:\/\//.test(config.smtpUrl))
    problems.push('RENDERGATE_SMTP_URL: must be an smtp:// or smtps:// URL');
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
