// The Idempotency-Key of an /openai/v1 request: as on /v1 (web/idempotency-key.ts), optional here (the
// service makes one when absent), and refused when sent in a form that names no key.
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { idempotencyKeyOf } from '../../web/idempotency-key.ts';

/** The key the request sent, undefined when it sent none; 400 IDEMPOTENCY_KEY_REQUIRED when malformed. */
export function idempotencyOf(req: FastifyRequest): string | undefined {
  const sent = req.headers['idempotency-key'];
  const idem = idempotencyKeyOf(sent);
  if (sent !== undefined && idem === undefined) {
    throw new ApiError(
      'IDEMPOTENCY_KEY_REQUIRED',
      'An Idempotency-Key must be 1 to 255 printable ASCII characters (e.g. a UUID), or an RFC 8941 string.',
    );
  }
  return idem;
}
