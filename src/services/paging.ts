// Keyset pagination. Ids are time-ordered (UUIDv7), so "id < last id seen" pages newest first without
// ever repeating or skipping a row inserted while a client pages. The cursor is opaque to clients.
import { ApiError } from '../domain/errors.ts';

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export function encodeCursor(lastId: string): string {
  return Buffer.from(lastId, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const id = cursor.length <= 200 ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!/^[a-z]{2,4}_[0-9a-f]{32}$/.test(id) || encodeCursor(id) !== cursor) {
    throw new ApiError('INVALID_INPUT', 'cursor: not a cursor this API returned.', [
      { field: 'cursor', message: 'not a cursor this API returned' },
    ]);
  }
  return id;
}

/** Parses the `limit` query parameter: an integer 1-100, default 20. */
export function parseLimit(raw: unknown): number {
  if (raw === undefined) return 20;
  const n = typeof raw === 'string' && /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= 100)) {
    throw new ApiError('INVALID_INPUT', 'limit: must be an integer from 1 to 100.', [
      { field: 'limit', message: 'must be an integer from 1 to 100' },
    ]);
  }
  return n;
}
