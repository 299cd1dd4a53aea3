// Checks on request bodies that the services apply to what the HTTP layer parsed.
import { ApiError } from './errors.ts';

/** The body as an object; anything else (an array, a string, null) is 400 INVALID_REQUEST. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError('INVALID_REQUEST', 'The body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}
