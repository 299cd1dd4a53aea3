// Streams a stored output with validators and single byte ranges. An unparseable Range is ignored and
// the whole file sent, as RFC 9110 allows; one wholly outside the file is 416 RANGE_NOT_SATISFIABLE.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import type { Storage } from '../storage/storage.ts';

/** The range asked for; null to send the whole file; 'unsatisfiable' when it starts past the end. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header || size === 0) return null;
  const m = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number, end: number;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return null;
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(m[1]);
    if (m[2] !== '' && Number(m[2]) < start) return null; // syntactically invalid: ignored
    if (start >= size) return 'unsatisfiable';
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  return start <= end && start < size ? { start, end } : null;
}

/** An entity tag without its weakness indicator: what the weak comparison compares. */
const weakTag = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag);

export async function sendContent(
  req: FastifyRequest,
  reply: FastifyReply,
  storage: Storage,
  c: { key: string; contentType: string; bytes: number; etag: string },
) {
  reply
    .header('etag', c.etag)
    .header('accept-ranges', 'bytes')
    .header('cache-control', 'private, max-age=0, must-revalidate');
  // RFC 9110 13.1.1: If-Match compares strongly (a weak tag never matches) and is evaluated first;
  // `*` matches any current file. A download that names a version it no longer is refuses.
  const im = req.headers['if-match'];
  if (
    typeof im === 'string' &&
    !im
      .split(',')
      .some((t) => t.trim() === '*' || (!t.trim().startsWith('W/') && t.trim() === c.etag))
  ) {
    throw new ApiError('PRECONDITION_FAILED', 'If-Match names no current ETag of this file.');
  }
  // RFC 9110 13.1.2: If-None-Match compares weakly, so `W/"x"` matches the stored `"x"`.
  const inm = req.headers['if-none-match'];
  const opaque = weakTag(c.etag);
  if (
    typeof inm === 'string' &&
    inm.split(',').some((t) => t.trim() === '*' || weakTag(t.trim()) === opaque)
  ) {
    return reply.code(304).send();
  }
  const ifRange = req.headers['if-range'];
  const range =
    ifRange === undefined || ifRange === c.etag ? parseRange(req.headers.range, c.bytes) : null;
  if (range === 'unsatisfiable') {
    throw new ApiError(
      'RANGE_NOT_SATISFIABLE',
      `The range starts past the end of the ${c.bytes}-byte file.`,
      undefined,
      { 'content-range': `bytes */${c.bytes}` },
    );
  }
  // Open before any header is final, so a file that vanished (deleted meanwhile) is a clean 404.
  let body;
  try {
    body = await storage.read(c.key, range ?? undefined);
  } catch (e) {
    if (
      (e as NodeJS.ErrnoException).code === 'ENOENT' ||
      (e as { name?: string }).name === 'NoSuchKey'
    ) {
      throw new ApiError('CONTENT_NOT_FOUND', 'This generation has no file.');
    }
    throw e;
  }
  reply.type(c.contentType);
  if (range) {
    reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${c.bytes}`)
      .header('content-length', String(range.end - range.start + 1));
    return reply.send(body);
  }
  reply.header('content-length', String(c.bytes));
  return reply.send(body);
}
