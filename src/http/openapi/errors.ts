// Error responses of the OpenAPI document, built from the one closed list of codes (domain/errors.ts):
// one response per HTTP status, whose body's `code` is an enum of exactly the codes mapped to it.
import { ERROR_STATUS } from '../../domain/errors.ts';

/** Every code of v1 with its status: the closed list itself. */
export function allErrorCodes(): Record<string, number> {
  return { ...ERROR_STATUS };
}

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is malformed or a value is invalid.',
  401: 'No valid API key.',
  402: 'The balance is below the price.',
  403:
    'The caller is known, but its role or mode may not do this (a test key on a live thing); ' +
    'the message names what is missing.',
  404: 'Nothing of that kind with that id for this account.',
  405: 'The path does not serve this method; `Allow` lists the methods it does.',
  408: 'The request did not arrive within the request timeout.',
  409: 'The request conflicts with the current state.',
  410: 'The file was removed after its expiresAt.',
  412: '`If-Match` names no current ETag of the file.',
  413: 'The body is over the limit.',
  415: 'The body has a Content-Type this operation does not take.',
  416: 'The Range is wholly outside the file.',
  422: 'The Idempotency-Key was used before with a different body.',
  429: 'Too many requests on this key; retry after Retry-After seconds.',
  431: 'The request headers are over the limit.',
  500: 'A bug; logged with the request id.',
  503: 'The database or storage is unreachable; retry after Retry-After seconds.',
  507: 'The storage is full; nothing was stored. Retry later.',
};

/** `components.schemas` for the error bodies and their details, and `components.responses` per status. */
export function errorComponents() {
  const byStatus = new Map<number, string[]>();
  for (const [code, status] of Object.entries(allErrorCodes()))
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  const schemas: Record<string, unknown> = {
    FieldProblem: {
      type: 'object',
      required: ['field', 'message'],
      additionalProperties: false,
      properties: {
        field: { type: 'string', examples: ['inputs.duration'] },
        message: { type: 'string' },
      },
    },
    BalanceProblem: {
      type: 'object',
      required: ['costCents', 'balanceCents'],
      additionalProperties: false,
      properties: { costCents: { type: 'integer' }, balanceCents: { type: 'integer' } },
    },
    DailyCapProblem: {
      type: 'object',
      required: ['capCents', 'spentTodayCents', 'costCents', 'resetsAt'],
      additionalProperties: false,
      properties: {
        capCents: { type: 'integer' },
        spentTodayCents: { type: 'integer' },
        costCents: { type: 'integer' },
        resetsAt: { type: 'string', format: 'date-time' },
      },
    },
    BudgetProblem: {
      type: 'object',
      description: 'One budget the charge would exceed (409 BUDGET_EXCEEDED).',
      required: ['scope', 'id', 'period', 'limitCents', 'spentCents', 'costCents', 'resetsAt'],
      additionalProperties: false,
      properties: {
        scope: { enum: ['account', 'member', 'key'] },
        id: { type: 'string' },
        period: { enum: ['day', 'week', 'month', 'total'] },
        limitCents: { type: 'integer' },
        spentCents: { type: 'integer' },
        costCents: { type: 'integer' },
        resetsAt: { type: ['string', 'null'], format: 'date-time' },
      },
    },
    UploadQuotaProblem: {
      type: 'object',
      required: ['usedBytes', 'quotaBytes', 'count', 'quotaCount'],
      additionalProperties: false,
      properties: {
        usedBytes: { type: 'integer' },
        quotaBytes: { type: 'integer' },
        count: { type: 'integer' },
        quotaCount: { type: 'integer' },
      },
    },
    StatusProblem: {
      type: 'object',
      required: ['status'],
      additionalProperties: false,
      properties: { status: { $ref: '#/components/schemas/GenerationStatus' } },
    },
    ErrorCode: { type: 'string', enum: Object.keys(allErrorCodes()).sort() },
    Error: {
      type: 'object',
      required: ['code', 'message', 'requestId'],
      additionalProperties: false,
      description: 'Every error. `message` is one human sentence; `code` is from the closed list.',
      properties: {
        code: { $ref: '#/components/schemas/ErrorCode' },
        message: { type: 'string' },
        details: {
          type: 'array',
          items: {
            anyOf: [
              'FieldProblem',
              'BalanceProblem',
              'DailyCapProblem',
              'BudgetProblem',
              'StatusProblem',
              'UploadQuotaProblem',
            ].map((n) => ({ $ref: `#/components/schemas/${n}` })),
          },
        },
        requestId: { type: 'string' },
      },
    },
  };
  const responses: Record<string, unknown> = {};
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    codes.sort();
    schemas[`Error${status}`] = {
      allOf: [{ $ref: '#/components/schemas/Error' }],
      properties: { code: { enum: codes } },
    };
    const headers: Record<string, unknown> = {
      'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
    };
    if (status === 429 || status === 503)
      headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    if (status === 416)
      headers['Content-Range'] = {
        description: '`bytes */<size>`',
        schema: { type: 'string', pattern: '^bytes \\*/\\d+$' },
      };
    if (status === 405)
      headers.Allow = { required: true, schema: { type: 'string' }, example: 'GET, HEAD' };
    if (status === 401) {
      headers['WWW-Authenticate'] = {
        required: true,
        description:
          'RFC 6750: `Bearer realm="rendergate"`, with `error="invalid_token"` when a key was sent.',
        schema: { type: 'string', pattern: '^Bearer realm=' },
      };
    }
    if (status !== 401) {
      headers.RateLimit = { $ref: '#/components/headers/RateLimit' };
      headers['RateLimit-Policy'] = { $ref: '#/components/headers/RateLimit-Policy' };
    }
    responses[`Error${status}`] = {
      description: `${STATUS_TEXT[status] ?? 'Error.'} Codes: ${codes.map((c) => '`' + c + '`').join(', ')}.`,
      headers,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/Error${status}` } } },
    };
  }
  return { schemas, responses, statuses: [...byStatus.keys()] };
}
