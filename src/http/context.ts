// What the HTTP routes are given: configuration and services, built once by the composition root.
import type { Config } from '../config.ts';
import type { Db } from '../db/pool.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import type { KeyRecord, KeyResolver } from '../services/keys.ts';
import type { RateLimits } from '../services/rate-limits.ts';
import type { Generations } from '../services/generations.ts';
import type { Storage } from '../storage/storage.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Uploads } from '../services/uploads.ts';
import type { WebhookEndpoints } from '../services/webhook-endpoints.ts';
import type { BackendHealth } from '../backends/health.ts';
import type { Topups } from '../services/topups.ts';

export interface Ctx {
  config: Config;
  db: Db;
  catalog: Catalog;
  keys: KeyResolver;
  limits: RateLimits;
  generations: Generations;
  storage: Storage;
  adminToken: string;
  metrics: Metrics;
  uploads: Uploads;
  webhooks: WebhookEndpoints;
  /** The model servers' health as this process's probes see it (processes that render only). */
  backendHealth?: BackendHealth;
  /** Stripe Checkout top-ups (docs/billing.md); null when Stripe is not configured. */
  topups: Topups | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: KeyRecord;
  }
}
