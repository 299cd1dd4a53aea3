// What the hosted-API drivers (fal, Replicate) share: their protocols differ, the frame around them
// does not. A job is submitted, polled with its tqdm progress, and its result read; a job still running
// when the render is aborted or times out is cancelled at the API (best effort), and every render's
// errors and time are counted (driver.ts metered).
import type { CompiledModel } from '../../domain/catalog-load.ts';
import { RenderError, type RenderContext, type RenderOutput } from '../types.ts';
import { malformed, textOutput } from './http.ts';
import { saveOutput, tqdmProgress } from './output.ts';
import { firstUrl } from './poll.ts';
import { metered, originOf, type DriverDeps } from './driver.ts';

export interface HostedJob {
  driver: 'fal' | 'replicate';
  /** The `kind` label of the request-time metric. */
  kind: string;
  /** The request that cancels job `id`. */
  cancel: { url: (id: string) => string; method: string; headers: Record<string, string> };
}

/**
 * Runs `body`, which calls `started(id)` once the API has accepted the job; from then on the job is
 * cancelled at the API if the render is aborted, or if `body` fails with BACKEND_TIMEOUT.
 */
export async function runHostedJob(
  job: HostedJob,
  deps: DriverDeps,
  ctx: RenderContext,
  body: (started: (id: string) => void) => Promise<RenderOutput>,
): Promise<RenderOutput> {
  let id: string | null = null;
  const cancel = () => {
    if (!id) return;
    void fetch(job.cancel.url(id), {
      method: job.cancel.method,
      headers: job.cancel.headers,
      signal: AbortSignal.timeout(5_000),
    }).then(
      (r) => r.body?.cancel(),
      () => undefined,
    );
  };
  ctx.signal.addEventListener('abort', cancel, { once: true });
  try {
    return await metered(deps, ctx.signal, { driver: job.driver, kind: job.kind }, async () => {
      try {
        return await body((started) => {
          id = started;
        });
      } catch (e) {
        if (id && !ctx.signal.aborted && e instanceof RenderError && e.code === 'BACKEND_TIMEOUT')
          cancel();
        throw e;
      }
    });
  } finally {
    ctx.signal.removeEventListener('abort', cancel);
  }
}

/** Reports the progress a job's log shows (tqdm lines), below 1 until the job has ended. */
export function logProgress(ctx: RenderContext, logs: string): void {
  const p = tqdmProgress(logs);
  if (p !== null) ctx.progress(Math.min(0.99, p));
}

/**
 * A finished job's output: `text` for a text model, else the first file `files` names, downloaded.
 * `what` names the answer in messages, `noFile` says what it lacked, `fileWhat` names the download.
 */
export async function hostedOutput(
  model: CompiledModel,
  deps: DriverDeps,
  ctx: RenderContext,
  o: {
    text: unknown;
    files: unknown;
    baseUrl: string;
    until: number;
    redact: (t: string) => string;
    what: string;
    noFile: string;
    fileWhat: string;
  },
): Promise<RenderOutput> {
  if (model.def.output.type === 'text') {
    if (typeof o.text !== 'string') throw malformed(o.what, 'a text model answered without text');
    return textOutput(o.text, deps.textLimitBytes);
  }
  const file = firstUrl(o.files);
  if (!file) throw malformed(o.what, o.noFile);
  return await saveOutput(file, {
    workDir: ctx.workDir,
    contentType: model.def.output.contentType,
    limitBytes: deps.outputLimitBytes,
    origin: originOf(o.baseUrl),
    allowPrivate: deps.allowPrivateUrls,
    signal: ctx.signal,
    timeoutMs: Math.max(1, o.until - Date.now()),
    redact: o.redact,
    what: o.fileWhat,
  });
}
