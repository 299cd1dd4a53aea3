// What the HTTP routes and the studio's pages are given: configuration and services, built once by
// the composition root (app.ts). No database: the routes reach it only through the services.
import type { Config } from '../config.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import type { Accounts } from '../services/accounts.ts';
import type { ApiKeys, KeyRecord } from '../services/keys.ts';
import type { Members } from '../services/members.ts';
import type { KeyResolver } from '../services/key-resolver.ts';
import type { RateLimits } from '../admission/rate-limits.ts';
import type { Generations } from '../services/generations.ts';
import type { OpsProbe } from '../services/ops.ts';
import type { Storage } from '../storage/storage.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Uploads } from '../services/uploads.ts';
import type { WebhookEndpoints } from '../services/webhook-endpoints.ts';
import type { AuditLog } from '../services/audit-log.ts';
import type { BackendHealth } from '../backends/health.ts';
import type { ChatCompletions } from '../services/chat.ts';
import type { Topups } from '../services/topups.ts';
import type { Billing } from '../services/billing.ts';
import type { Receipts } from '../services/receipts.ts';
import type { RefusalPace } from '../admission/refusal-pace.ts';
import type { BodyBudget } from '../admission/body-budget.ts';
import type { Usage } from '../services/usage.ts';
import type { Budgets } from '../services/budgets.ts';
import type { Principal } from '../domain/principal.ts';
import type { SessionCache } from '../services/session-cache.ts';

export interface Ctx {
  config: Config;
  catalog: Catalog;
  keys: KeyResolver;
  /** Accounts, their balance and ledger (the operator API, GET /me, the studio). */
  accounts: Accounts;
  /** Creating and revoking API keys. */
  apiKeys: ApiKeys;
  /** An account's members and invites (studio Members page, admin API). */
  members: Members;
  /** Budgets of accounts, members and keys, and the low-balance alert. */
  budgets: Budgets;
  limits: RateLimits;
  generations: Generations;
  storage: Storage;
  adminToken: string;
  metrics: Metrics;
  uploads: Uploads;
  webhooks: WebhookEndpoints;
  /** The audit log's reads (its writes happen inside each change's transaction). */
  auditLog: AuditLog;
  /** /openai/v1's chat completions, over `generations`. */
  chat: ChatCompletions;
  /** What /readyz and /metrics read from the database. */
  ops: OpsProbe;
  /** The model servers' health as this process's probes see it (processes that render only). */
  backendHealth?: BackendHealth;
  /** Stripe Checkout top-ups (docs/billing.md); null when Stripe is not configured. */
  topups: Topups | null;
  /** The console's view of billing: shortfalls and Stripe events. */
  billing: Billing;
  /** Receipts and credit notes, listed and as PDFs. */
  receipts: Receipts;
  /** Refusals that keep coming, answered late (admission/refusal-pace.ts). */
  pace: RefusalPace;
  /** The bytes of request bodies each account sends (admission/body-budget.ts). */
  bodies: BodyBudget;
  /** GET /v1/usage: spend per day, model, key and member. */
  usage: Usage;
  /** The studio's live sessions kept in memory, dropped on a change answered here (none: a worker). */
  sessionCache: SessionCache | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The key of a /v1 or /openai/v1 request. */
    apiKey: KeyRecord;
    /**
     * Who acts, made once at the edge: the key (/v1, /openai/v1), the signed-in member (the
     * studio), the operator (/admin/v1, the console). Services take it (domain/principal.ts).
     */
    principal: Principal;
  }
}
