// What a driver is (one folder, src/backends/<name>/, registered in drivers.ts), what it is built
// with, and what it adds to a ModelBackend: a health probe of one of its servers (health.ts calls
// it; a probe that throws marks the server down).
import type { BackendBinding } from '../../domain/catalog.ts';
import type { CatalogDriver } from '../../domain/catalog-driver.ts';
import type { CompiledModel } from '../../domain/catalog-load.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import type { Secrets } from '../secrets.ts';
import { RenderError, type ModelBackend, type RenderContext } from '../types.ts';
import type { CogReceiver } from '../cog/receiver.ts';
import type { ServerPool } from './pool.ts';

/**
 * A driver as the table (drivers.ts) holds it: its catalog block (keys, checks, CEL, read by
 * domain/catalog-load.ts), the backend it builds for a model, its servers, and its fakes.
 */
export interface Driver<B extends BackendBinding = BackendBinding> extends CatalogDriver<B> {
  /** The backend of a model whose block this driver's check made; else DriverSetupError. */
  create(model: CompiledModel, binding: B, deps: DriverDeps): RemoteBackend;
  /**
   * The servers of the operator's own that render the model: claim.ts shares renders among them and
   * health.ts probes them. Absent for hosted APIs, which queue renders themselves.
   */
  pool?(binding: B): ServerPool;
  /** Built by processes that render nothing (role api) too: its setup problems stop them too. */
  readonly everyRole?: boolean;
  /**
   * The fake servers of its protocol that the tests run (paths from the project's root). They stay
   * under test/, not in this folder: the build compiles src/ alone, and the image holds no fake.
   */
  readonly fakes: readonly string[];
}

/** A model this build cannot serve (a renderer it lacks): the start stops, saying which. */
export class DriverSetupError extends Error {}

export interface DriverDeps {
  /** The built-in renderers (local/index.ts) and any a test adds, by name. */
  renderers: Readonly<Record<string, ModelBackend>>;
  secrets: Secrets;
  outputLimitBytes: number;
  /** The most text a text model may answer (UTF-8 bytes); answers are read only this far (and some). */
  textLimitBytes: number;
  /** RENDERGATE_ALLOW_PRIVATE_URLS, for result addresses off the model server's own origin. */
  allowPrivateUrls: boolean;
  metrics: Metrics;
  /** Asynchronous Cog predictions with live progress (RENDERGATE_WORKER_CALLBACK_URL); unset: synchronous. */
  cogAsync?: { receiver: CogReceiver; pollMs: number };
}

export interface RemoteBackend extends ModelBackend {
  /** Resolves when the server at `url` can take renders; throws saying why not. */
  probe?(url: string, signal: AbortSignal): Promise<void>;
}

/** The server a render goes to: the pool member claim.ts chose, else the pool's first. */
export function serverOf(urls: readonly string[], ctx: RenderContext): string {
  return ctx.backendUrl && urls.includes(ctx.backendUrl) ? ctx.backendUrl : urls[0];
}

/** Milliseconds left of the render's time limit, counted from `startedAt`. */
export function timeLeft(until: number): number {
  return Math.max(1, until - Date.now());
}

/** A value a model server sent (a reason, a status), as text for a message: strings as they are, else JSON. */
export function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return v.toString();
  if (v === undefined) return '';
  return JSON.stringify(v) ?? '';
}

/** The origin of a server's base address (`http://host:port`), whose result files are its own. */
export function originOf(base: string): string | null {
  try {
    return new URL(base).origin;
  } catch {
    return null;
  }
}

/**
 * Runs a render's exchange with its model server under the backend metrics: a RenderError it ends
 * with is counted by driver and code (not when the render was aborted, nor the code `uncounted`, which
 * the driver counts itself), and with `kind` its time is observed.
 */
export async function metered<T>(
  deps: Pick<DriverDeps, 'metrics'>,
  signal: AbortSignal,
  m: { driver: string; kind?: string; uncounted?: string },
  run: () => Promise<T>,
): Promise<T> {
  const t0 = performance.now();
  try {
    return await run();
  } catch (e) {
    if (e instanceof RenderError && e.code !== m.uncounted && !signal.aborted)
      deps.metrics.backendErrors.inc({ driver: m.driver, code: e.code });
    throw e;
  } finally {
    if (m.kind)
      deps.metrics.backendRequest.observe(
        { driver: m.driver, kind: m.kind },
        (performance.now() - t0) / 1000,
      );
  }
}
