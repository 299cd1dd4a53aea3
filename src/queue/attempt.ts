// One render attempt, from its claim to its recorded outcome: the lease renewed while it renders (a
// lease it no longer holds stops it), its scratch directory, its progress, the backend's run within
// the model's time limit, then its output or its failure recorded (outcome.ts), each write guarded by
// the attempt's lease. The worker (worker.ts) decides which attempts run; this runs one.
import type { Logger } from 'pino';
import { RenderError, type ModelBackend, type RenderContext } from '../backends/types.ts';
import type { Db } from '../db/pool.ts';
import { renewLease } from '../db/generations-attempt.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import type { ModelDef } from '../domain/catalog.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { LiveText } from './live-text.ts';
import type { AttemptOutcome } from './outcome.ts';
import type { RecordingHere } from './recording-here.ts';
import { ProgressWriter } from './progress.ts';
import { ScratchDir } from './scratch-dir.ts';
import { traced } from './spans.ts';
import { withTimeLimit } from './time-limit.ts';
import type { ClaimedJob } from './types.ts';

const HEARTBEAT_MS = 4_000;

/** An attempt in progress: what stops it, and why it was stopped. */
export interface Running {
  job: ClaimedJob;
  abort: AbortController;
  reason: 'cancelled' | 'shutdown' | 'timeout' | null;
}

/** `<generation id>-<attempt>`: two attempts of one render never share it. */
export const attemptKey = (job: ClaimedJob) => `${job.id}-${job.lease.attempt}`;

export interface AttemptDeps {
  db: Db;
  /** Lease renewals and progress: the claims' pool. */
  claimDb: Db;
  catalog: Catalog;
  backendFor: (model: ModelDef) => ModelBackend;
  outcome: AttemptOutcome;
  metrics: Metrics;
  log: Logger;
  leaseSeconds: number;
  tmpDir: string;
  readUpload?: (generationId: string) => RenderContext['readUpload'];
  liveText?: LiveText;
  onFinal?: (generationId: string) => void;
  /** Holds this process's wakes for a change whose outcome is being recorded here. */
  recording?: RecordingHere;
}

/**
 * Runs an outcome's statement (`write`: true when it made the render final) with the change it
 * notifies held here until it has answered (recording-here.ts).
 */
async function recorded(d: AttemptDeps, id: string, write: () => Promise<boolean>) {
  d.recording?.begin(id);
  let final = false;
  try {
    final = await write();
    return final;
  } finally {
    d.recording?.end(id, final);
  }
}

/** Stops the attempt (cancelled or deleted by its owner, or its lease lost). */
export function cancelAttempt(r: Running): void {
  if (!r.abort.signal.aborted) {
    r.reason = 'cancelled';
    r.abort.abort();
  }
}

/**
 * Runs the attempt `state` to its end. `released` is called once the attempt holds nothing but its
 * scratch directory, which is removed after it (the next claim need not wait for that).
 */
export async function runAttempt(
  d: AttemptDeps,
  state: Running,
  released: () => void,
): Promise<void> {
  const { job } = state;
  const key = attemptKey(job);
  const log = d.log.child({ generationId: job.id, modelId: job.model_id, attempt: job.attempts });
  const heartbeat = setInterval(() => {
    renewLease(d.claimDb, job.id, job.lease, d.leaseSeconds).then(
      (held) => {
        // cancelled, deleted, or superseded by a later attempt: stop rendering
        if (!held) cancelAttempt(state);
      },
      () => {
        /* database briefly away: the lease covers a few missed beats */
      },
    );
  }, HEARTBEAT_MS);
  const scratch = new ScratchDir(d.tmpDir, job.id);
  const progress = new ProgressWriter(d.claimDb, job.id, job.lease);
  try {
    const compiled = d.catalog.get(job.model_id);
    if (!compiled) {
      throw new RenderError(
        'MODEL_UNAVAILABLE',
        `The model ${job.model_id} is no longer in the catalog.`,
        false,
      );
    }
    const model = compiled.def;
    if (job.attempts > model.maxAttempts) {
      throw new RenderError(
        'RENDER_ABANDONED',
        'The render stopped its worker repeatedly and was given up.',
        false,
      );
    }
    log.info('render started');
    const t0 = performance.now();
    const live = d.liveText;
    const out = await traced(job, 'generation.render', () => {
      // A chat server's render made from a chat request is sent that conversation (migrations/016),
      // read by the claim.
      const messages = compiled.chatServer ? (job.messages ?? null) : null;
      return withTimeLimit(
        state,
        model,
        d.backendFor(model).run(job.inputs, {
          signal: state.abort.signal,
          get workDir() {
            return scratch.path();
          },
          timeLimitSeconds: model.timeLimitSeconds,
          progress: progress.report,
          attemptId: key,
          readUpload: d.readUpload?.(job.id) ?? (async () => null),
          ...(job.backend_url ? { backendUrl: job.backend_url } : {}),
          ...(messages ? { messages } : {}),
          ...(messages && job.response_format ? { responseFormat: job.response_format } : {}),
          // A chat request's render may be streamed by another process: its pieces may be relayed.
          ...(live
            ? { textPiece: (p: string) => live.publish(job.id, key, p, messages !== null) }
            : {}),
        }),
      );
    }).finally(() =>
      d.metrics.renderDuration.observe({ model: job.model_id }, (performance.now() - t0) / 1000),
    );
    if (state.abort.signal.aborted) return;
    const stored = () => d.outcome.succeed(job, out);
    if (await traced(job, 'generation.store', () => recorded(d, job.id, stored))) {
      d.metrics.renders.inc({ model: job.model_id, status: 'succeeded' });
      // The chat answer waiting here first: the held requests' wake goes after it.
      if (out.kind === 'text') live?.succeeded(job.id, out.text, out.tokens);
      d.onFinal?.(job.id);
    }
    log.info({ ms: Math.round(performance.now() - t0) }, 'render finished');
  } catch (e) {
    if (state.reason === 'cancelled') {
      log.info('render cancelled');
      return;
    }
    if (state.reason === 'shutdown') return; // handed back to the queue by stop()
    if (await recorded(d, job.id, () => d.outcome.fail(job, e, log))) d.onFinal?.(job.id);
  } finally {
    clearInterval(heartbeat);
    progress.stop();
    d.liveText?.end(job.id, key);
    released();
    await scratch.remove();
  }
}
