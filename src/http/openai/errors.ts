// Errors of /openai/v1 in OpenAI's body, `{ error: { message, type, param, code } }`: the same HTTP
// status as the v1 API gives the same failure, `code` the v1 code, `param` the request parameter at
// fault when there is one. OpenAI's SDKs read the status to choose their error class (401
// AuthenticationError, 404 NotFoundError, 429 RateLimitError …) and `error` for its fields.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_STATUS } from '../../domain/errors.ts';
import { bearerChallenge, toApiError } from '../../web/error-handler.ts';

/** OpenAI's `type` for a status. */
export function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'insufficient_quota';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** The request parameter an error names: the first field of its details, `inputs.*` being the messages. */
function paramOf(details: unknown[] | undefined): string | null {
  const field = (details?.[0] as { field?: unknown } | undefined)?.field;
  if (typeof field !== 'string') return null;
  return field === 'inputs' || field.startsWith('inputs.') ? 'messages' : field;
}

export function openAiErrorBody(
  status: number,
  code: string,
  message: string,
  param: string | null = null,
  type = errorType(status),
) {
  return { error: { message, type, param, code } };
}

export function sendOpenAiError(
  req: FastifyRequest,
  reply: FastifyReply,
  e: unknown,
): FastifyReply {
  const err = toApiError(e);
  if (err.code === 'INTERNAL_ERROR') req.log.error({ err: e }, 'unhandled error');
  else if (err.code === 'SERVICE_UNAVAILABLE') req.log.warn({ err: e }, 'dependency unavailable');
  if (err.headers) reply.headers(err.headers);
  // RFC 6750 3: a 401 names its scheme, as the v1 API's does (OpenAI's own 401 omits it).
  if (err.status === 401) reply.header('www-authenticate', bearerChallenge(req, err.code));
  const status = ERROR_STATUS[err.code];
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send(openAiErrorBody(status, err.code, err.message, paramOf(err.details)));
}
