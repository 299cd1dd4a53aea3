// Cancellation and deadlines shared by the fetcher, ffmpeg and the renderers. An abort carries its
// RenderError as the signal's reason, so whoever notices the abort throws the error that caused it.
import { RenderError } from '../types.ts';

/** The RenderError an aborted signal stands for: its own reason, or a cancellation. */
export function abortError(signal: AbortSignal): RenderError {
  const reason: unknown = signal.reason;
  if (reason instanceof RenderError) return reason;
  return new RenderError('RENDER_CANCELLED', 'The render was cancelled.', false);
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal);
}

/** Settles like `promise`, or rejects with the signal's error as soon as it aborts. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      // the promise's own rejection, passed on as it is
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        reject(e);
      },
    );
  });
}

export interface Deadline {
  signal: AbortSignal;
  /** Milliseconds left before the deadline fires (0 once it has). */
  remainingMs(): number;
  dispose(): void;
}

/**
 * A signal that aborts when `parent` does (keeping its reason) or after `ms` with `timeoutError`.
 * Always dispose() it: the timer and the listener on `parent` are released there.
 */
export function deadline(
  parent: AbortSignal | undefined,
  ms: number,
  timeoutError: () => RenderError,
): Deadline {
  const controller = new AbortController();
  const endsAt = Date.now() + ms;
  const onParentAbort = () => controller.abort(parent?.reason);
  const timer = setTimeout(() => controller.abort(timeoutError()), Math.max(0, ms));
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    remainingMs: () => Math.max(0, endsAt - Date.now()),
    dispose: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}

/** The render-wide deadline of a backend call: RENDER_TIMEOUT once `seconds` have passed. */
export function renderDeadline(signal: AbortSignal, seconds: number): Deadline {
  return deadline(
    signal,
    seconds * 1000,
    () =>
      new RenderError(
        'RENDER_TIMEOUT',
        `The render took longer than its limit of ${seconds} s.`,
        true,
      ),
  );
}
