// Asynchronous Cog predictions, for live progress (RENDERGATE_WORKER_CALLBACK_URL set). Facts from
// replicate/cog `docs/http.md` and `crates/coglet/src/transport/http/routes.rs`:
// - `PUT /predictions/{id}` is the idempotent create; with `Prefer: respond-async` (that exact value)
//   it answers 202 `{ id, status: "starting" }` and runs in the background, reporting to `webhook`.
// - A PUT for an id that is in flight creates nothing and answers 202 with its current state (logs
//   included), whatever the headers: that is how a running prediction is read (Cog has no GET of a
//   prediction). Once a prediction is final Cog forgets it; a PUT then starts it again, and without
//   `Prefer: respond-async` answers when that run is final.
// So the final answer comes from a prediction either way: from its `completed` webhook, or, when that
// webhook was lost, from the synchronous PUT the next poll makes (its run is cancelled, by closing the
// request, if the lost webhook turns up meanwhile). Progress comes from the tqdm lines of `logs`, in
// webhooks and polls alike.
import { setTimeout as sleep } from 'node:timers/promises';
import { RenderError, type RenderContext } from '../types.ts';
import {
  call,
  errorFor,
  malformed,
  readJson,
  withRetries,
  type CallOptions,
} from '../shared/http.ts';
import { timeLeft } from '../shared/driver.ts';
import type { CogReceiver, Prediction } from './receiver.ts';
import { tqdmProgress } from './tqdm.ts';

const FINAL = ['succeeded', 'failed', 'canceled'];

export interface AsyncOptions {
  base: string;
  id: string;
  input: Record<string, unknown>;
  ctx: RenderContext;
  until: number;
  receiver: CogReceiver;
  pollMs: number;
  /** The largest prediction body read (a final one may inline its file). */
  limitBytes: number;
  redact: (t: string) => string;
}

/** Runs one prediction asynchronously; resolves with it once final. */
export async function predictAsync(o: AsyncOptions): Promise<Prediction> {
  const { ctx } = o;
  const state: { final: Prediction | null } = { final: null };
  let best = 0;
  const arrived = new AbortController(); // fires when the final state is known
  const take = (p: Prediction) => {
    const f = tqdmProgress(p.logs);
    // Monotonic within the attempt (a model may run several bars); 1 only once succeeded.
    if (f !== undefined && f > best) {
      best = f;
      ctx.progress(Math.min(0.99, f));
    }
    if (!state.final && typeof p.status === 'string' && FINAL.includes(p.status)) {
      state.final = p;
      arrived.abort();
    }
  };
  const hook = await o.receiver.register(o.id, take);
  try {
    const body = JSON.stringify({
      id: o.id,
      input: o.input,
      webhook: hook.url,
      webhook_events_filter: ['start', 'output', 'logs', 'completed'],
    });
    take(
      await withRetries(() => put(o, body, true, ctx.signal), {
        signal: ctx.signal,
        tries: 4,
        until: o.until,
      }),
    );
    while (!state.final) {
      if (Date.now() >= o.until)
        throw new RenderError(
          'BACKEND_TIMEOUT',
          'The Cog prediction did not finish in time.',
          true,
        );
      await sleep(Math.min(o.pollMs, timeLeft(o.until)), undefined, {
        signal: AbortSignal.any([ctx.signal, arrived.signal]),
      }).catch(() => undefined);
      if (ctx.signal.aborted)
        throw new RenderError('RENDER_ABORTED', 'The render was stopped.', true);
      if (state.final) break;
      // A poll: the current state while it runs; the final one (by running it again) if Cog has
      // forgotten it. Closed when the webhook brings the final state first.
      try {
        take(await put(o, body, false, AbortSignal.any([ctx.signal, arrived.signal])));
      } catch (e) {
        if (!(e instanceof RenderError) || !e.retryable || ctx.signal.aborted) throw e;
        // Busy, unreachable, or closed by the webhook's answer: the next turn decides.
      }
    }
    return state.final;
  } finally {
    hook.release();
  }
}

async function put(
  o: AsyncOptions,
  body: string,
  async: boolean,
  signal: AbortSignal,
): Promise<Prediction> {
  const c: CallOptions = {
    signal,
    timeoutMs: timeLeft(o.until),
    redact: o.redact,
    what: 'Cog prediction',
  };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (async) headers.prefer = 'respond-async';
  const res = await call(
    `${o.base}/predictions/${encodeURIComponent(o.id)}`,
    { method: 'PUT', headers, body },
    c,
  );
  if (!res.ok) throw await errorFor(res, c, [409, 503]);
  const p = await readJson(res, c, o.limitBytes);
  if (typeof p !== 'object' || p === null || typeof (p as Prediction).status !== 'string')
    throw malformed('Cog prediction', 'no status');
  return p;
}
