// The one error type of the SDK: an API error answer, a network failure after retries, a render that
// ended failed or refunded, a wait that timed out, or a webhook that did not verify.
import type { Generation } from './types.js';

/** Codes the SDK itself raises, beside the API's own (ErrorCode). */
export type ClientErrorCode =
  | 'NETWORK_ERROR'
  | 'WAIT_TIMEOUT'
  | 'GENERATION_FAILED'
  | 'GENERATION_REFUNDED'
  | 'INVALID_RESPONSE'
  | 'WEBHOOK_INVALID';

export class RendergateError extends Error {
  /** HTTP status of the answer; 0 when there was no error answer (network, timeout, failed render, webhook). */
  readonly status: number;
  /** The API's error code, or one of ClientErrorCode. */
  readonly code: string;
  readonly details: unknown[] | undefined;
  /** The request id of the answer (X-Request-Id), to quote to the operator. */
  readonly requestId: string | undefined;
  /** Seconds the server asked to wait (Retry-After), when it did. */
  readonly retryAfter: number | undefined;
  /** The final generation, when run() ended failed or refunded (or a wait timed out). */
  readonly generation: Generation | undefined;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    details?: unknown[];
    requestId?: string;
    retryAfter?: number;
    generation?: Generation;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'RendergateError';
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.generation = init.generation;
  }
}

/** Seconds of a Retry-After header (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The RendergateError of a non-2xx answer, from the contract's error body when it has one. */
export async function errorFromResponse(res: Response): Promise<RendergateError> {
  let body: Partial<{ code: string; message: string; details: unknown[]; requestId: string }> = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    // not the contract's body (a proxy's page, say): keep the status
  }
  return new RendergateError({
    status: res.status,
    code: typeof body.code === 'string' ? body.code : `HTTP_${res.status}`,
    message:
      typeof body.message === 'string'
        ? body.message
        : `The server answered ${res.status} ${res.statusText}.`,
    details: Array.isArray(body.details) ? body.details : undefined,
    requestId: body.requestId ?? res.headers.get('x-request-id') ?? undefined,
    retryAfter: parseRetryAfter(res.headers.get('retry-after')),
  });
}
