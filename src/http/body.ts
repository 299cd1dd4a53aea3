// Shared checks on request bodies and query strings.
import { ApiError } from '../domain/errors.ts';

export function objectBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError('INVALID_REQUEST', 'The body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

/** A query parameter given once as a string; repeated or absent parameters are refused or undefined. */
export function queryParam(query: unknown, name: string): string | undefined {
  const v = (query as Record<string, unknown> | undefined)?.[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') {
    throw new ApiError('INVALID_INPUT', `${name}: give it once.`, [{ field: name, message: 'must be given once' }]);
  }
  return v;
}
