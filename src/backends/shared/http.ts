// Requests to model servers, with the failure classes every driver shares (docs/backends.md "What every
// driver shares"): connection errors, timeouts, 5xx, 429 and "busy" answers are retryable (with the server's
// Retry-After when it sent one); other 4xx answers are permanent; a render's abort is never reported as
// a server failure. Messages carry no request headers and are scrubbed of secrets.
import { setTimeout as sleep } from 'node:timers/promises';
import { RenderError } from '../types.ts';
import { deadline, guardBody } from './deadline.ts';

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

/** Bytes of an error answer read at most: enough for any message, never a whole page or file. */
export const ERROR_BODY_BYTES = 64 * 1024;
/** Characters of a backend's message a client may see (after redaction, one sentence). */
const MESSAGE_CHARS = 200;

/**
 * An error answer's own message, as one redacted sentence: the `detail`, `error` or `message` of a JSON
 * body (never the body itself: an HTML page or a dump is not shown). Secrets are removed from the whole
 * text read before it is cut, so a secret that straddles the cut cannot show its first half.
 */
export async function describeBody(res: Response, redact: (t: string) => string): Promise<string> {
  const bytes = await readBounded(res, ERROR_BODY_BYTES, null).catch(() => Buffer.alloc(0));
  return sentenceOf(bytes.toString('utf8'), redact);
}

/** One redacted sentence of a JSON error body's message; '' when the body has none. */
export function sentenceOf(text: string, redact: (t: string) => string): string {
  let msg: string;
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const detail = j?.detail ?? j?.error ?? j?.message;
    if (detail === undefined || detail === null) return '';
    const inner =
      typeof detail === 'object' && detail !== null && !Array.isArray(detail)
        ? ((detail as Record<string, unknown>).message ?? (detail as Record<string, unknown>).msg)
        : undefined;
    msg =
      typeof detail === 'string'
        ? detail
        : typeof inner === 'string'
          ? inner
          : JSON.stringify(detail);
  } catch {
    return ''; // not JSON: a page, a trace or a dump, never shown
  }
  const clean = redact(msg).replace(/\s+/g, ' ').trim();
  const first = /^.*?[.!?](?=\s|$)/.exec(clean)?.[0] ?? clean;
  return first.length > MESSAGE_CHARS ? `${first.slice(0, MESSAGE_CHARS - 1)}…` : first;
}

/**
 * The body, read at most `limit` bytes: past it reading stops, the connection is dropped and
 * `tooLarge` (or a plain error when null) is thrown. Nothing past the limit is ever buffered.
 */
export async function readBounded(
  res: Response,
  limit: number,
  o: CallOptions | null,
  tooLarge?: (bytes: number) => RenderError,
): Promise<Buffer> {
  const fail = (bytes: number) =>
    tooLarge?.(bytes) ?? new Error(`answer larger than ${limit} bytes`);
  const len = Number(res.headers.get('content-length') ?? 0);
  if (len > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw fail(len);
  }
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Buffer[] = [];
  let seen = 0;
  for (;;) {
    let step: ReadableStreamReadResult<Uint8Array>;
    try {
      step = await reader.read();
    } catch (e) {
      throw o ? networkError(e, o) : e;
    }
    if (step.done) break;
    seen += step.value.byteLength;
    if (seen > limit) {
      await reader.cancel().catch(() => undefined);
      throw fail(seen);
    }
    chunks.push(Buffer.from(step.value.buffer, step.value.byteOffset, step.value.byteLength));
  }
  return Buffer.concat(chunks, seen);
}

/** The bytes a JSON answer carrying a text output may take: the text, escaped, and its envelope. */
export const textAnswerLimit = (textLimitBytes: number) => 2 * textLimitBytes + 1024 * 1024;

/** A text model's output, refused past the limit (UTF-8 bytes). */
export function textOutput(text: string, limitBytes: number): { kind: 'text'; text: string } {
  if (text.length > limitBytes || Buffer.byteLength(text) > limitBytes) {
    throw new RenderError(
      'OUTPUT_TOO_LARGE',
      `The model's text is longer than ${limitBytes} bytes.`,
      false,
    );
  }
  return { kind: 'text', text };
}

/** The RenderError for an unsuccessful answer; `busy` lists statuses that mean "full, try later". */
export async function errorFor(
  res: Response,
  o: CallOptions,
  busy: number[] = [],
): Promise<RenderError> {
  const body = await describeBody(res, o.redact);
  const after = retryAfter(res.headers.get('retry-after'));
  const opts = after === undefined ? {} : { retryAfterSeconds: after };
  if (res.status === 429 || busy.includes(res.status))
    return new RenderError(
      'BACKEND_BUSY',
      `The model server is busy (${o.what}: HTTP ${res.status}${body ? `, ${body}` : ''}).`,
      true,
      opts,
    );
  if (res.status >= 500)
    return new RenderError(
      'BACKEND_UNAVAILABLE',
      `The model server failed (${o.what}: HTTP ${res.status}${body ? `, ${body}` : ''}).`,
      true,
      opts,
    );
  if (res.status === 422 || res.status === 400)
    return new RenderError(
      'MODEL_INPUT_REJECTED',
      `The model server refused the input (${o.what}: ${body || `HTTP ${res.status}`}).`,
      false,
    );
  return new RenderError(
    'BACKEND_REJECTED',
    `The model server refused the request (${o.what}: HTTP ${res.status}${body ? `, ${body}` : ''}).`,
    false,
  );
}

/** fetch with the render's abort and a time limit; network failures become retryable RenderErrors. */
export async function call(url: string, init: RequestInit, o: CallOptions): Promise<Response> {
  const d = deadline(o.signal, o.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: d.signal });
  } catch (e) {
    d.clear();
    throw networkError(e, o, d.timedOut());
  }
  // The limit covers the body too: a server that sends its headers and then hangs is cut off.
  return guardBody(res, d, () => timedOut(o));
}

const timedOut = (o: CallOptions) =>
  new RenderError('BACKEND_TIMEOUT', `The model server did not answer in time (${o.what}).`, true);

export function networkError(e: unknown, o: CallOptions, timeout = false): RenderError {
  if (e instanceof RenderError) return e;
  if (o.signal.aborted)
    return new RenderError('RENDER_ABORTED', 'The render was stopped.', true, { cause: e });
  if (timeout) return timedOut(o);
  const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name;
  return new RenderError(
    'BACKEND_UNREACHABLE',
    `The model server could not be reached (${o.what}: ${o.redact(String(cause))}).`,
    true,
  );
}

/** JSON of a successful answer, read at most `limitBytes`; a body that is not JSON is malformed (retryable). */
export async function readJson(
  res: Response,
  o: CallOptions,
  limitBytes = 64 * 1024 * 1024,
): Promise<unknown> {
  const bytes = await readBounded(res, limitBytes, o, (n) => tooLargeAnswer(o, n));
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw malformed(o.what, 'not JSON');
  }
}

const tooLargeAnswer = (o: CallOptions, bytes: number) =>
  new RenderError(
    'OUTPUT_TOO_LARGE',
    `The model server's answer is too large (${o.what}: over ${bytes} bytes).`,
    false,
  );

export const malformed = (what: string, why: string) =>
  new RenderError(
    'BACKEND_BAD_RESPONSE',
    `The model server sent a malformed answer (${what}: ${why}).`,
    true,
  );

/**
 * Runs `fn` again on a retryable failure, after the server's Retry-After or a doubling delay, while the
 * render's time allows; then the failure goes to the worker, which retries the attempt later (worker.ts).
 */
export async function withRetries<T>(
  fn: () => Promise<T>,
  o: { signal: AbortSignal; tries: number; until: number; only?: string[] },
): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (
        !(e instanceof RenderError) ||
        !e.retryable ||
        e.code === 'RENDER_ABORTED' ||
        i >= o.tries ||
        o.signal.aborted
      )
        throw e;
      if (o.only && !o.only.includes(e.code)) throw e;
      const delayMs = e.retryAfterSeconds !== undefined ? e.retryAfterSeconds * 1000 : 250 * 2 ** i;
      if (Date.now() + delayMs >= o.until) throw e;
      await sleep(delayMs, undefined, { signal: o.signal }).catch(() => {
        throw e;
      });
    }
  }
}
