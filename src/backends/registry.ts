// Binds each catalog model to the backend that renders it, checked once at boot: a catalog naming an
// unknown renderer, or a secret (`${env:NAME}`) missing from the environment, stops the start instead
// of failing renders later. Also gives the pools of servers (claim.ts assigns renders to them) and
// their health (health.ts).
import { ConfigError, type Config } from '../config.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import type { ModelDef, ServerPool } from '../domain/catalog.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { createLocalBackends } from './local/index.ts';
import type { ModelBackend } from './types.ts';
import { Secrets } from './secrets.ts';
import { redacting } from './redacting.ts';
import { BackendHealth, type HealthTarget } from './health.ts';
import type { DriverFactory, RemoteBackend } from './shared/driver.ts';
import { createCogBackend } from './cog/index.ts';
import { createOpenAiBackend } from './openai/index.ts';
import { createComfyBackend } from './comfyui/index.ts';
import { createReplicateBackend } from './replicate/index.ts';
import { createFalBackend } from './fal/index.ts';
import { CogReceiver } from './cog/receiver.ts';

const DRIVERS: Record<string, DriverFactory> = {
  cog: createCogBackend,
  openai: createOpenAiBackend,
  comfyui: createComfyBackend,
  replicate: createReplicateBackend,
  fal: createFalBackend,
};

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
  const local: Record<string, ModelBackend> = {
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
  const cogAsync = cogReceiver ? { receiver: cogReceiver, pollMs: config.cogPollMs } : undefined;
  for (const m of catalog.compiled) {
    const b = m.def.backend;
    if (b.driver === 'local') {
      if (Object.hasOwn(local, b.renderer)) byModel.set(m.id, local[b.renderer]);
      else
        problems.push(
          `model ${m.id}: backend.renderer "${b.renderer}" is not a built-in renderer (${Object.keys(local).join(', ')})`,
        );
      continue;
    }
    if (!render) continue;
    const factory = DRIVERS[b.driver];
    if (!factory) {
      problems.push(`model ${m.id}: backend driver ${b.driver} is not available in this build`);
      continue;
    }
    const backend: RemoteBackend = factory(m, {
      secrets,
      outputLimitBytes: config.backendOutputLimitBytes,
      textLimitBytes: config.textOutputLimitBytes,
      metrics,
      allowPrivateUrls: config.allowPrivateUrls,
      ...(cogAsync ? { cogAsync } : {}),
    });
    // Secrets of hosted APIs are read by their drivers; the rest (an address, say) here, so all are checked.
    if ('urls' in b) {
      const urls = b.urls.map((u) => secrets.resolve(u));
      pools.set(m.id, { urls, concurrencyPerUrl: b.concurrencyPerUrl });
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
