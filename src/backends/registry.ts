// Binds each catalog model to the backend its driver (drivers.ts) builds, checked once at boot: a
// catalog naming an unknown renderer, or a secret (`${env:NAME}`) missing from the environment, stops
// the start instead of failing renders later. Also gives the pools of servers (claim.ts assigns
// renders to them) and their health (health.ts).
import { ConfigError, type Config } from '../config.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import type { ModelDef } from '../domain/catalog.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { createLocalBackends } from './local/index.ts';
import type { ModelBackend } from './types.ts';
import { Secrets } from './secrets.ts';
import { redacting } from './redacting.ts';
import { BackendHealth, type HealthTarget } from './health.ts';
import { DriverSetupError, type DriverDeps, type RemoteBackend } from './shared/driver.ts';
import type { ServerPool } from './shared/pool.ts';
import { CogReceiver } from './cog/receiver.ts';
import { DRIVERS } from './drivers.ts';

export interface Backends {
  backendFor: (model: ModelDef) => ModelBackend;
  /** The pool of each model served by servers of the operator's own (cog, comfyui, openai). */
  pools: Map<string, ServerPool>;
  health: BackendHealth;
  /** The worker's receiver of Cog webhooks, when Cog predictions run asynchronously; close it at shutdown. */
  cogReceiver?: CogReceiver;
}

export interface BackendOptions {
  /** Renderers added to the built-in ones (tests). */
  extra?: Record<string, ModelBackend>;
  env?: NodeJS.ProcessEnv;
  /** Called when a server that was down answers its health check again. */
  onRecover?: () => void;
  /**
   * False in processes that never render (role api): model servers are then neither built nor
   * probed, and their secrets are not needed there.
   */
  render?: boolean;
}

export function createBackends(
  config: Config,
  catalog: Catalog,
  metrics: Metrics,
  opts: BackendOptions = {},
): Backends {
  const { extra = {}, env = process.env, onRecover, render = true } = opts;
  const renderers: Record<string, ModelBackend> = {
    ...createLocalBackends({
      allowPrivateUrls: config.allowPrivateUrls,
      fetchTimeoutMs: config.fetchTimeoutMs,
    }),
    ...extra,
  };
  const secrets = new Secrets(env);
  const problems: string[] = [];
  const byModel = new Map<string, ModelBackend>();
  const pools = new Map<string, ServerPool>();
  const targets: HealthTarget[] = [];
  const cogReceiver =
    render && config.workerCallbackUrl
      ? new CogReceiver(
          config.workerCallbackUrl,
          Math.ceil((config.backendOutputLimitBytes * 4) / 3) + 1024 * 1024,
        )
      : undefined;
  const deps: DriverDeps = {
    renderers,
    secrets,
    outputLimitBytes: config.backendOutputLimitBytes,
    textLimitBytes: config.textOutputLimitBytes,
    metrics,
    allowPrivateUrls: config.allowPrivateUrls,
    ...(cogReceiver ? { cogAsync: { receiver: cogReceiver, pollMs: config.cogPollMs } } : {}),
  };
  for (const m of catalog.compiled) {
    const b = m.def.backend;
    // The catalog was checked against this table, unless it was loaded with another (a test's).
    const driver = Object.hasOwn(DRIVERS, b.driver) ? DRIVERS[b.driver] : undefined;
    if (!driver) {
      problems.push(`model ${m.id}: backend driver ${b.driver} is not available in this build`);
      continue;
    }
    if (!render && !driver.everyRole) continue;
    let backend: RemoteBackend;
    try {
      backend = driver.create(m, b, deps);
    } catch (e) {
      if (!(e instanceof DriverSetupError)) throw e;
      problems.push(e.message);
      continue;
    }
    // Secrets of hosted APIs are read by their drivers; the rest (an address, say) here, so all are checked.
    const pool = driver.pool?.(b);
    if (pool) {
      const urls = pool.urls.map((u) => secrets.resolve(u));
      pools.set(m.id, { urls, concurrencyPerUrl: pool.concurrencyPerUrl });
      if (backend.probe)
        for (const url of urls)
          targets.push({ driver: b.driver, url, probe: backend.probe.bind(backend) });
    }
    byModel.set(m.id, backend);
  }
  for (const name of secrets.missing)
    problems.push(`${name}: required by the catalog (\${env:${name}}) but not set`);
  if (problems.length > 0) throw new ConfigError(problems);
  // Whatever a backend sends leaves this layer scrubbed of every secret the catalog names.
  for (const [id, backend] of byModel) byModel.set(id, redacting(backend, secrets));
  return {
    backendFor: (model) => byModel.get(model.id)!,
    pools,
    health: new BackendHealth(targets, metrics, config.backendHealthIntervalMs, onRecover, (t) =>
      secrets.redact(t),
    ),
    ...(cogReceiver ? { cogReceiver } : {}),
  };
}
