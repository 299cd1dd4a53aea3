// Every error leaves the service as the contract's body, mapped in this one place. A handler throws;
// it never builds an error body itself.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ERROR_STATUS } from '../domain/errors.ts';

/** Errors that mean the database (or another dependency) is unreachable, not that we have a bug. */
export function isUnavailable(e: unknown): boolean {
  const err = e as { code?: string; syscall?: string; message?: string } | null;
  if (!err) return false;
  const code = err.code ?? '';
  // a Unix socket whose server is stopped is gone: its connect fails with ENOENT
  if (code === 'ENOENT' && err.syscall === 'connect') return true;
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      'ENOTFOUND',
      '57P01',
      '57P02',
      '57P03',
      '57014',
      '53300',
      '08000',
      '08003',
      '08006',
      '08001',
      '08004',
    ].includes(code) ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout|the database system is (starting up|shutting down)/i.test(
      err.message ?? '',
    )
  );
}

function fromFastify(e: FastifyError): ApiError | null {
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('PAYLOAD_TOO_LARGE', 'The request body is larger than the limit.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('INVALID_REQUEST', 'The body is not valid JSON.');
    case 'FST_ERR_BAD_URL':
      return new ApiError('INVALID_REQUEST', 'The URL is not valid percent-encoded UTF-8.');
    default:
      break;
  }
  if (e.statusCode === 400 && e instanceof SyntaxError)
    return new ApiError('INVALID_REQUEST', 'The body is not valid JSON.');
  if (e.statusCode === 400 && /JSON|prototype|constructor/i.test(e.message))
    return new ApiError('INVALID_REQUEST', 'The body is not valid JSON.');
  if (e.statusCode === 413)
    return new ApiError('PAYLOAD_TOO_LARGE', 'The request body is larger than the limit.');
  if (e.statusCode === 415)
    return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.');
  if (e.statusCode === 400) return new ApiError('INVALID_REQUEST', 'The request is malformed.');
  if (e.statusCode === 404) return new ApiError('NOT_FOUND', 'There is nothing at this address.');
  return null;
}

export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  if (isUnavailable(e))
    return new ApiError(
      'SERVICE_UNAVAILABLE',
      'The service is briefly unavailable; retry shortly.',
      undefined,
      { 'retry-after': '2' },
    );
  const mapped =
    typeof (e as FastifyError)?.code === 'string' ||
    typeof (e as FastifyError)?.statusCode === 'number'
      ? fromFastify(e as FastifyError)
      : null;
  return (
    mapped ?? new ApiError('INTERNAL_ERROR', 'An internal error occurred; it has been logged.')
  );
}

/**
 * The RFC 6750 challenge of a 401: the realm, and `error="invalid_token"` when a credential was sent
 * (none when it was missing, as section 3.1 says).
 */
export function bearerChallenge(req: FastifyRequest, code: string): string {
  const realm = code === 'ADMIN_TOKEN_INVALID' ? 'rendergate-admin' : 'rendergate';
  if (!req.headers.authorization) return `Bearer realm="${realm}"`;
  const why =
    code === 'API_KEY_REVOKED'
      ? 'The key was revoked.'
      : code === 'ADMIN_TOKEN_INVALID'
        ? 'Not the admin token.'
        : 'Unknown or malformed key.';
  return `Bearer realm="${realm}", error="invalid_token", error_description="${why}"`;
}

export function sendError(req: FastifyRequest, reply: FastifyReply, e: unknown): FastifyReply {
  const err = toApiError(e);
  if (err.code === 'INTERNAL_ERROR') req.log.error({ err: e }, 'unhandled error');
  else if (err.code === 'SERVICE_UNAVAILABLE') req.log.warn({ err: e }, 'dependency unavailable');
  if (err.headers) reply.headers(err.headers);
  if (err.status === 401) reply.header('www-authenticate', bearerChallenge(req, err.code));
  const body: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.details) body.details = err.details;
  body.requestId = req.id;
  return reply.code(ERROR_STATUS[err.code]).type('application/json; charset=utf-8').send(body);
}
