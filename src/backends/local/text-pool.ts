// The text model runs in a pool of worker threads, never on the event loop: a render that takes seconds
// of CPU must not stall the API, the heartbeats of other renders, or the claim loop. A thread whose
// render passes its deadline or is cancelled is terminated (piscina ends the thread running an aborted
// task), so the model's time limit holds however long the computation would have run; each thread's heap
// is bounded, so a render that would grow past it ends that thread alone.
import os from 'node:os';
import { Piscina } from 'piscina';
import type { ResolvedInputs } from '../../domain/catalog.ts';
import { RenderError } from '../types.ts';
import { abortError } from './abort.ts';
import type { RenderFailureCode } from '../../domain/render-failures.ts';

type Answer =
  | { ok: true; text: string }
  | { ok: false; code: RenderFailureCode; message: string; retryable: boolean };

/** Heap of one text worker thread: many times what the largest allowed text needs (tens of MB). */
const THREAD_HEAP_MB = 256;

let pool: Piscina | null = null;

// Made on first use: an API process, which never renders, starts no threads. Idle threads end after a
// minute and never keep the process alive.
function thePool(): Piscina {
  pool ??= new Piscina({
    filename: new URL('./text-worker.mjs', import.meta.url).href,
    minThreads: 0,
    maxThreads: Math.max(1, Math.min(4, os.availableParallelism())),
    idleTimeout: 60_000,
    resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
  });
  return pool;
}

/** The shot-list text for `inputs`, computed on a worker thread; rejects with the signal's RenderError once it aborts. */
export async function shotListOffThread(
  inputs: ResolvedInputs,
  signal: AbortSignal,
): Promise<string> {
  let answer: Answer;
  try {
    answer = (await thePool().run(inputs, { signal })) as Answer;
  } catch (e) {
    if (signal.aborted) throw abortError(signal);
    if ((e as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      throw new RenderError(
        'RENDER_INPUT_TOO_COMPLEX',
        'The text needs more memory than a render may use.',
        false,
        { cause: e },
      );
    }
    throw e;
  }
  if (!answer.ok) throw new RenderError(answer.code, answer.message, answer.retryable);
  return answer.text;
}

/** Ends the pool's threads (graceful shutdown, tests). */
export async function closeTextPool(): Promise<void> {
  const p = pool;
  pool = null;
  await p?.destroy();
}
