// A Cog model container (replicate/cog, docs/http.md; the server in crates/coglet/src/transport/http/).
// One synchronous `POST /predictions` per attempt, named by the attempt's own id, so two attempts never
// share a prediction. Cog cancels a synchronous prediction when its client disconnects; we also send
// `POST /predictions/{id}/cancel` when the render is aborted (cancel, DELETE, shutdown, time limit).
// 409 "at capacity" and 503 "not ready" are busy answers, retried; `status: failed` is the model's own
// failure (a bad input for it), final and refunded. Progress: Cog reports it only as tqdm lines in
// `logs`, and a synchronous prediction shows its logs only in the final answer; with
// RENDERGATE_WORKER_CALLBACK_URL set, predictions run asynchronously instead (async.ts), reporting their
// logs to the worker's receiver (receiver.ts) as they run.
import type { CompiledModel } from '../../domain/catalog-load.ts';
import { RenderError, type RenderContext, type RenderOutput } from '../types.ts';
import {
  call,
  errorFor,
  malformed,
  readBounded,
  readJson,
  textAnswerLimit,
  textOutput,
  withRetries,
  type CallOptions,
} from '../shared/http.ts';
import { inlineUploads, saveOutput } from '../shared/output.ts';
import {
  metered,
  originOf,
  serverOf,
  textOf,
  timeLeft,
  type DriverDeps,
  type RemoteBackend,
} from '../shared/driver.ts';
import type { ResolvedInputs } from '../../domain/catalog.ts';
import type { Prediction } from './receiver.ts';
import { predictAsync } from './async.ts';
import type { CogBinding } from './catalog.ts';

const HEALTHY = ['READY', 'BUSY'];

export function createCogBackend(
  model: CompiledModel,
  b: CogBinding,
  deps: DriverDeps,
): RemoteBackend {
  const redact = (t: string) => deps.secrets.redact(t);
  // A file output inlined as a data URL is a third larger than the file; a text model's answer is
  // bounded by its text limit.
  const answerLimit =
    model.def.output.type === 'text'
      ? textAnswerLimit(deps.textLimitBytes)
      : Math.ceil((deps.outputLimitBytes * 4) / 3) + 1024 * 1024;
  const observe = (kind: string, t0: number) =>
    deps.metrics.backendRequest.observe({ driver: 'cog', kind }, (performance.now() - t0) / 1000);

  async function predict(
    base: string,
    id: string,
    input: Record<string, unknown>,
    ctx: RenderContext,
    until: number,
  ): Promise<Prediction> {
    const o: CallOptions = {
      signal: ctx.signal,
      timeoutMs: timeLeft(until),
      redact,
      what: 'Cog prediction',
    };
    const t0 = performance.now();
    try {
      const res = await call(
        `${base}/predictions`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id, input }),
        },
        o,
      );
      if (!res.ok) throw await errorFor(res, o, [409, 503]);
      // A file output inlined as a data URL is a third larger than the file; a bigger answer is refused
      // unread. (Outputs of hundreds of MB belong in files: run Cog with --upload-url.) A text model's
      // answer is read only as far as its text may go: a 60 MB string stops being read at a few MB.
      const p = await readJson(res, o, answerLimit);
      if (typeof p !== 'object' || p === null || typeof (p as Prediction).status !== 'string')
        throw malformed('Cog prediction', 'no status');
      return p;
    } finally {
      observe('predict', t0);
    }
  }

  async function output(
    p: Prediction,
    base: string,
    ctx: RenderContext,
    until: number,
  ): Promise<RenderOutput> {
    if (model.def.output.type === 'text') {
      // A text model's output is a string, or (an iterator output) the list of its pieces.
      if (typeof p.output === 'string') return textOutput(p.output, deps.textLimitBytes);
      if (Array.isArray(p.output) && p.output.every((x) => typeof x === 'string'))
        return textOutput(p.output.join(''), deps.textLimitBytes);
      throw malformed('Cog prediction', 'a text model answered without text');
    }
    const file =
      typeof p.output === 'string'
        ? p.output
        : Array.isArray(p.output)
          ? p.output.find((x) => typeof x === 'string')
          : undefined;
    if (typeof file !== 'string') throw malformed('Cog prediction', 'no file in its output');
    return saveOutput(file, {
      workDir: ctx.workDir,
      contentType: model.def.output.contentType,
      limitBytes: deps.outputLimitBytes,
      origin: originOf(base),
      allowPrivate: deps.allowPrivateUrls,
      signal: ctx.signal,
      timeoutMs: timeLeft(until),
      redact,
      what: 'Cog prediction',
    });
  }

  return {
    async run(inputs: ResolvedInputs, ctx: RenderContext): Promise<RenderOutput> {
      const base = serverOf(b.urls, ctx);
      const until = Date.now() + ctx.timeLimitSeconds * 1000;
      const id = ctx.attemptId;
      const cancel = () => {
        void fetch(`${base}/predictions/${encodeURIComponent(id)}/cancel`, {
          method: 'POST',
          signal: AbortSignal.timeout(5_000),
        }).then(
          (r) => r.body?.cancel(),
          () => undefined,
        );
      };
      ctx.signal.addEventListener('abort', cancel, { once: true });
      // MODEL_FAILED is counted where it is seen, whatever the render's signal then says.
      const m = { driver: 'cog', uncounted: 'MODEL_FAILED' };
      try {
        return await metered(deps, ctx.signal, m, async () => {
          const input = await inlineUploads(
            model.backendCel.inputs ? model.backendCel.inputs.evaluate(inputs) : inputs,
            ctx.readUpload,
          );
          let p: Prediction;
          const live = deps.cogAsync;
          try {
            p = live
              ? await predictAsync({
                  base,
                  id,
                  input,
                  ctx,
                  until,
                  receiver: live.receiver,
                  pollMs: live.pollMs,
                  limitBytes: answerLimit,
                  redact,
                })
              : await withRetries(() => predict(base, id, input, ctx, until), {
                  signal: ctx.signal,
                  tries: 4,
                  until,
                });
          } catch (e) {
            // A request that ended without an answer (a time limit, a lost connection) may have left the
            // prediction running: tell Cog to stop it, whatever the disconnect already did.
            if (e instanceof RenderError && e.code !== 'BACKEND_BUSY' && !ctx.signal.aborted)
              cancel();
            throw e;
          }
          if (p.status === 'failed') {
            deps.metrics.backendErrors.inc({ driver: 'cog', code: 'MODEL_FAILED' });
            throw new RenderError(
              'MODEL_FAILED',
              `The model failed: ${redact(textOf(p.error ?? 'no reason given')).slice(0, 300)}`,
              false,
            );
          }
          if (p.status === 'canceled')
            throw new RenderError(
              'BACKEND_CANCELLED',
              'The model server cancelled the prediction.',
              true,
            );
          if (p.status !== 'succeeded')
            throw malformed('Cog prediction', `status ${p.status} in a final answer`);
          return await output(p, base, ctx, until);
        });
      } finally {
        ctx.signal.removeEventListener('abort', cancel);
      }
    },

    async probe(url, signal) {
      const res = await fetch(`${url}/health-check`, { signal });
      // a few bytes of JSON; a larger answer is not read (and not healthy)
      const raw = await readBounded(res, 64 * 1024, null).catch(() => null);
      let body: { status?: unknown } | null = null;
      try {
        body = raw ? (JSON.parse(raw.toString('utf8')) as { status?: unknown } | null) : null;
      } catch {
        /* not JSON: not healthy */
      }
      if (!res.ok || !HEALTHY.includes(textOf(body?.status)))
        throw new Error(`status ${textOf(body?.status ?? res.status)}`);
    },
  };
}
