// Requests with retries. Network errors, 429 and 503 are retried with exponential backoff (honouring
// Retry-After): a read always; a write only when repeating it cannot do it twice (a create carries its
// Idempotency-Key, so a repeat is a replay that charges nothing). Other writes are retried only on 429
// and 503, answers that mean the request was not carried out.
import { RendergateError, errorFromResponse, parseRetryAfter } from './errors.js';

export interface TransportOptions {
  apiKey: string;
  baseUrl: string;
  fetch: typeof fetch;
  maxRetries: number;
  /** Per attempt, on top of any server-side wait the request asks for. */
  timeoutMs: number;
  userAgent?: string;
}

export interface Call {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  /** True when a repeat after a lost answer cannot change anything twice (reads, keyed creates, cancel). */
  idempotent: boolean;
  signal?: AbortSignal;
  /** Seconds the server may hold the request (Prefer: wait), added to the attempt's timeout. */
  holdSeconds?: number;
}

/** Errors answered to a repeat of a request whose earlier answer was lost (it may have been carried out). */
export const afterLostAnswer = new WeakSet<RendergateError>();

const MAX_BACKOFF_MS = 8_000;
const MAX_RETRY_AFTER_S = 60;

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    // Rejects with the signal's own reason, whatever the caller aborted with, as fetch() does.
    if (signal?.aborted) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      reject(signal.reason);
      return;
    }
    const done = () => {
      signal?.removeEventListener('abort', abort);
      resolve();
    };
    const t = setTimeout(done, ms);
    const abort = () => {
      clearTimeout(t);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}

export class Transport {
  constructor(readonly opts: TransportOptions) {}

  url(path: string, query?: Call['query']): string {
    const u = new URL(this.opts.baseUrl.replace(/\/+$/, '') + path);
    for (const [k, v] of Object.entries(query ?? {}))
      if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  /** The successful Response (2xx or 304), after retries; a RendergateError otherwise. */
  async send(call: Call): Promise<Response> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.opts.apiKey}`,
      ...call.headers,
    };
    if (this.opts.userAgent) headers['user-agent'] = this.opts.userAgent;
    let body = call.body;
    if (call.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.json);
    }
    const url = this.url(call.path, call.query);
    let lost = false;
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(this.opts.timeoutMs + (call.holdSeconds ?? 0) * 1000);
      const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
      let res: Response;
      try {
        res = await this.opts.fetch(url, { method: call.method, headers, body, signal });
      } catch (e) {
        if (call.signal?.aborted) throw call.signal.reason;
        const err = new RendergateError({
          status: 0,
          code: 'NETWORK_ERROR',
          cause: e,
          message: `${call.method} ${call.path}: ${timeout.aborted ? 'no answer in time' : (e as Error).message}`,
        });
        if (!call.idempotent || attempt >= this.opts.maxRetries) throw err;
        lost = true;
        await sleep(backoff(attempt), call.signal);
        continue;
      }
      if (res.ok || res.status === 304) return res;
      if ((res.status === 429 || res.status === 503) && attempt < this.opts.maxRetries) {
        const after = parseRetryAfter(res.headers.get('retry-after'));
        await res.body?.cancel();
        await sleep(
          after === undefined ? backoff(attempt) : Math.min(after, MAX_RETRY_AFTER_S) * 1000,
          call.signal,
        );
        continue;
      }
      const err = await errorFromResponse(res);
      if (lost) afterLostAnswer.add(err);
      throw err;
    }
  }

  async json<T>(call: Call): Promise<T> {
    const res = await this.send(call);
    try {
      return (await res.json()) as T;
    } catch (e) {
      throw new RendergateError({
        status: res.status,
        code: 'INVALID_RESPONSE',
        message: `${call.method} ${call.path}: the answer is not JSON.`,
        requestId: res.headers.get('x-request-id') ?? undefined,
        cause: e,
      });
    }
  }
}

/** Exponential backoff with jitter: about 0.5 s, 1 s, 2 s, … up to 8 s. */
function backoff(attempt: number): number {
  const base = Math.min(MAX_BACKOFF_MS, 500 * 2 ** attempt);
  return base / 2 + Math.random() * (base / 2);
}
