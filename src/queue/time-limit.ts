// The model's time limit, enforced by the worker as well as by the backend: a backend that neither
// finishes nor honours its abort cannot hold a worker slot (and the job) forever.
import { RenderError } from '../backends/types.ts';
import type { ModelDef } from '../domain/catalog.ts';

// A backend gets this long after its abort to return before the worker stops waiting for it.
const ABANDON_AFTER_ABORT_MS = 10_000;

/** What the limit acts on: the attempt's abort, and why it was aborted (set to 'timeout' here). */
export interface Abortable {
  abort: AbortController;
  reason: 'cancelled' | 'shutdown' | 'timeout' | null;
}

/**
 * `work`, or RENDER_TIMEOUT once the model's time limit (plus 2 s) has passed, or once the backend
 * has not returned ABANDON_AFTER_ABORT_MS after its abort.
 */
export function withTimeLimit<T>(state: Abortable, model: ModelDef, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let abandon: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    const giveUp = () => {
      const seconds = ABANDON_AFTER_ABORT_MS / 1000;
      abandon = setTimeout(
        () =>
          reject(
            new RenderError(
              'RENDER_TIMEOUT',
              `The render did not stop within ${seconds} s of being stopped.`,
              true,
            ),
          ),
        ABANDON_AFTER_ABORT_MS,
      );
    };
    timer = setTimeout(
      () => {
        if (!state.abort.signal.aborted) {
          state.reason = 'timeout';
          state.abort.abort();
        }
        reject(
          new RenderError(
            'RENDER_TIMEOUT',
            `The render ran past its time limit of ${model.timeLimitSeconds} s.`,
            true,
          ),
        );
      },
      model.timeLimitSeconds * 1000 + 2_000,
    );
    state.abort.signal.addEventListener('abort', giveUp, { once: true });
  });
  work.catch(() => {
    /* settled after the race was decided: nothing left to report */
  });
  return Promise.race([work, limit]).finally(() => {
    clearTimeout(timer);
    clearTimeout(abandon);
  });
}
