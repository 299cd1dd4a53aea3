// Polling a hosted API's job until it ends (Replicate predictions, fal queue requests): a GET every
// `intervalMs`, longer when the server answers 429 with Retry-After; a failed poll (connection, 5xx)
// is tried again on the next round rather than ending the render, until the time limit.
import { setTimeout as sleep } from 'node:timers/promises';
import { RenderError } from '../types.ts';
import { call, errorFor, readJson, type CallOptions } from './http.ts';

export async function pollJson<T>(
  url: string,
  headers: Record<string, string>,
  o: CallOptions & { intervalMs: number; until: number; limitBytes?: number },
  done: (body: T) => boolean,
): Promise<T> {
  let lastError: RenderError | null = null;
  for (;;) {
    let wait = o.intervalMs;
    try {
      const res = await call(
        url,
        { headers },
        { ...o, timeoutMs: Math.min(30_000, Math.max(1, o.until - Date.now())) },
      );
      if (!res.ok) throw await errorFor(res, o);
      const body = (await readJson(res, o, o.limitBytes)) as T;
      if (done(body)) return body;
      lastError = null;
    } catch (e) {
      if (!(e instanceof RenderError) || !e.retryable || o.signal.aborted) throw e;
      lastError = e;
      if (e.retryAfterSeconds !== undefined) wait = Math.max(wait, e.retryAfterSeconds * 1000);
    }
    if (Date.now() + wait >= o.until) {
      throw (
        lastError ??
        new RenderError(
          'BACKEND_TIMEOUT',
          `The model server did not finish in time (${o.what}).`,
          true,
        )
      );
    }
    await sleep(wait, undefined, { signal: o.signal }).catch(() => {
      throw new RenderError('RENDER_ABORTED', 'The render was stopped.', true);
    });
  }
}

/** The first http(s) address found in a result (`output`, `video.url`, `images[0].url`, …), depth first. */
export function firstUrl(v: unknown, depth = 0): string | null {
  if (depth > 8) return null;
  if (typeof v === 'string') return /^(https?:|data:)/.test(v) ? v : null;
  if (Array.isArray(v)) {
    for (const x of v) {
      const u = firstUrl(x, depth + 1);
      if (u) return u;
    }
    return null;
  }
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    if (typeof o.url === 'string') return firstUrl(o.url, depth + 1);
    for (const x of Object.values(o)) {
      const u = firstUrl(x, depth + 1);
      if (u) return u;
    }
  }
  return null;
}
