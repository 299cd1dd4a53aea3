// A request's own time limit joined to the render's abort, kept alive by strong references.
//
// Not AbortSignal.any([signal, AbortSignal.timeout(ms)]): Node 20 holds a composite's sources weakly
// and a timeout signal's timer holds its signal weakly, so once a collection runs the timeout signal
// is gone and never fires. A request to a model server that sent its headers and then hung was then
// stopped only by the worker's own limit, and its socket stayed open (reproduced with --expose-gc:
// fetch, and http.request, both kept reading past the limit).
import { RenderError } from '../types.ts';

export interface Deadline {
  /** Aborted when the parent signal is, or when the time is up. */
  signal: AbortSignal;
  /** Whether it was the time limit (not the parent) that aborted `signal`. */
  timedOut(): boolean;
  /** Stop the timer and unhook from the parent; `signal` never aborts after this. */
  clear(): void;
}

export function deadline(parent: AbortSignal, ms: number): Deadline {
  const ctl = new AbortController();
  let timed = false;
  const onAbort = () => {
    clearTimeout(timer);
    ctl.abort(parent.reason);
  };
  // The timer's callback and the parent's listener both hold `ctl`: neither can be collected early.
  const timer = setTimeout(() => {
    timed = true;
    parent.removeEventListener('abort', onAbort);
    ctl.abort(new DOMException('The operation timed out.', 'TimeoutError'));
  }, ms);
  timer.unref();
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  return {
    signal: ctl.signal,
    timedOut: () => timed,
    clear: () => {
      clearTimeout(timer);
      parent.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * `res` with a body that stops at `d`'s abort (a time limit reads as `timeoutError`) and clears `d`
 * once read to its end, cancelled or failed. The body is read through its own reader, cancelled at the
 * abort, so the connection is closed whatever fetch still links to the signal.
 */
export function guardBody(res: Response, d: Deadline, timeoutError: () => RenderError): Response {
  if (!res.body) {
    d.clear();
    return res;
  }
  const reader = res.body.getReader();
  const stop = () => void reader.cancel(d.signal.reason).catch(() => undefined);
  d.signal.addEventListener('abort', stop, { once: true });
  const done = () => {
    d.clear();
    d.signal.removeEventListener('abort', stop);
  };
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        let step: ReadableStreamReadResult<Uint8Array>;
        try {
          step = await reader.read();
        } catch (e) {
          done();
          throw d.timedOut() ? timeoutError() : e;
        }
        // A cancel at the abort ends a pending read as if the body had ended: it did not.
        if (d.signal.aborted) {
          done();
          throw d.timedOut() ? timeoutError() : (d.signal.reason as Error);
        }
        if (step.done) {
          done();
          c.close();
        } else c.enqueue(step.value);
      },
      cancel(reason) {
        done();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}
