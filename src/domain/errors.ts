// The one closed list of error codes (docs/api.md "Errors"), each mapped to its HTTP status here and
// nowhere else. Handlers throw ApiError; the HTTP error handler turns it into the body.

export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  INVALID_INPUT: 400,
  IDEMPOTENCY_KEY_REQUIRED: 400,
  API_KEY_MISSING: 401,
  API_KEY_INVALID: 401,
  API_KEY_REVOKED: 401,
  ADMIN_TOKEN_INVALID: 401,
  INSUFFICIENT_BALANCE: 402,
  FORBIDDEN: 403,
  MODEL_NOT_FOUND: 404,
  GENERATION_NOT_FOUND: 404,
  CONTENT_NOT_FOUND: 404,
  ACCOUNT_NOT_FOUND: 404,
  KEY_NOT_FOUND: 404,
  NOT_FOUND: 404,
  UPLOAD_NOT_FOUND: 404,
  WEBHOOK_ENDPOINT_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  API_KEY_DAILY_CAP: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  GENERATION_NOT_READY: 409,
  GENERATION_NOT_REFUNDABLE: 409,
  GENERATION_NOT_CANCELLABLE: 409,
  WEBHOOK_ENDPOINT_LIMIT: 409,
  UPLOAD_QUOTA_EXCEEDED: 409,
  LAST_OWNER: 409,
  BUDGET_EXCEEDED: 409,
  CONTENT_EXPIRED: 410,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  INSUFFICIENT_STORAGE: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldProblem {
  field: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown[],
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }
}

/** A 400 INVALID_INPUT naming every bad field. */
export function invalidInput(problems: FieldProblem[]): ApiError {
  const first = problems[0];
  const message =
    problems.length === 1 && first
      ? `${first.field}: ${first.message}`
      : `${problems.length} fields are invalid; see details.`;
  return new ApiError('INVALID_INPUT', message, problems);
}
