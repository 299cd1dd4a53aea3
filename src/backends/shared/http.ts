// Requests to model servers, with the failure classes every driver shares (docs/backends.md "What every
// driver shares"): connection errors, timeouts, 5xx, 429 and "busy" answers are retryable (with the server's
// Retry-After when it sent one); other 4xx answers are permanent; a render's abort is never reported as
// a server failure. Messages carry no request headers and are scrubbed of secrets.
import { setTimeout as sleep } from 'node:timers/promises';
import { RenderError } from '../types.ts';

export interface CallOptions {
  signal: AbortSignal;
  /** Milliseconds this request may take, headers and body. */
  timeoutMs: number;
  redact: (text: string) => string;
  /** What the request is, for messages ("Cog prediction"). */
  what: string;
}

/** Seconds from a Retry-After header (delta seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** An error body's own message, short, for a generation's error. */
export async function describeBody(res: Response, redact: (t: string) => string): Promise<string> {
  const text = await res.text().catch(() => '');
  let msg = text;
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const detail = j.detail ?? j.error ?? j.message;
    msg = typeof detail === 'string' ? detail : JSON.stringify(detail ?? j);
  } catch { /* not JSON: the text itself */ }
  return redact(msg.replace(/\s+/g, ' ').trim().slice(0, 300));
}

/** The RenderError for an unsuccessful answer; `busy` lists statuses that mean "full, try later". */
export async function errorFor(res: Response, o: CallOptions, busy: number[] = []): Promise<RenderError> {
  const body = await describeBody(res, o.redact);
  const after = retryAfter(res.headers.get('retry-after'));
  const opts = after === undefined ? {} : { retryAfterSeconds: after };
  if (res.status === 429 || busy.includes(res.status)) return new RenderError('BACKEND_BUSY', `The model server is busy (${o.what}: HTTP ${res.status}${body ? `, ${body}` : ''}).`, true, opts);
  if (res.status >= 500) return new RenderError('BACKEND_UNAVAILABLE', `The model server failed (${o.what}: HTTP ${res.status}${body ? `, ${body}` : ''}).`, true, opts);
  if (res.status === 422 || res.status === 400) return new RenderError('MODEL_INPUT_REJECTED', `The model server refused the input (${o.what}: ${body || `HTTP ${res.status}`}).`, false);
  return new RenderError('BACKEND_REJECTED', `The model server refused the request (${o.what}: HTTP ${res.status}${body ? `, ${body}` : ''}).`, false);
}

/** fetch with the render's abort and a time limit; network failures become retryable RenderErrors. */
export async function call(url: string, init: RequestInit, o: CallOptions): Promise<Response> {
  const timeout = AbortSignal.timeout(o.timeoutMs);
  try {
    return await fetch(url, { ...init, signal: AbortSignal.any([o.signal, timeout]) });
  } catch (e) {
    throw networkError(e, o, timeout);
  }
}

export function networkError(e: unknown, o: CallOptions, timeout?: AbortSignal): RenderError {
  if (e instanceof RenderError) return e;
  if (o.signal.aborted) return new RenderError('RENDER_ABORTED', 'The render was stopped.', true, { cause: e });
  if (timeout?.aborted) return new RenderError('BACKEND_TIMEOUT', `The model server did not answer in time (${o.what}).`, true);
  const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name;
  return new RenderError('BACKEND_UNREACHABLE', `The model server could not be reached (${o.what}: ${o.redact(String(cause))}).`, true);
}

/** JSON of a successful answer; a body that is not JSON is a malformed answer (retryable). */
export async function readJson(res: Response, o: CallOptions, limitBytes = 64 * 1024 * 1024): Promise<unknown> {
  const len = Number(res.headers.get('content-length') ?? 0);
  if (len > limitBytes) { await res.body?.cancel(); throw tooLargeAnswer(o, len); }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    throw networkError(e, o);
  }
  if (text.length > limitBytes) throw tooLargeAnswer(o, text.length);
  try {
    return JSON.parse(text);
  } catch {
    throw malformed(o.what, 'not JSON');
  }
}

const tooLargeAnswer = (o: CallOptions, bytes: number) =>
  new RenderError('OUTPUT_TOO_LARGE', `The model server's answer is too large (${o.what}: ${bytes} bytes).`, false);

export const malformed = (what: string, why: string) =>
  new RenderError('BACKEND_BAD_RESPONSE', `The model server sent a malformed answer (${what}: ${why}).`, true);

/**
 * Runs `fn` again on a retryable failure, after the server's Retry-After or a doubling delay, while the
 * render's time allows; then the failure goes to the worker, which retries the attempt later (worker.ts).
 */
export async function withRetries<T>(fn: () => Promise<T>, o: { signal: AbortSignal; tries: number; until: number; only?: string[] }): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof RenderError) || !e.retryable || e.code === 'RENDER_ABORTED' || i >= o.tries || o.signal.aborted) throw e;
      if (o.only && !o.only.includes(e.code)) throw e;
      const delayMs = e.retryAfterSeconds !== undefined ? e.retryAfterSeconds * 1000 : 250 * 2 ** i;
      if (Date.now() + delayMs >= o.until) throw e;
      await sleep(delayMs, undefined, { signal: o.signal }).catch(() => { throw e; });
    }
  }
}
