// Images uploaded from a model's form: the studio's door to the same Uploads service as POST /v1/uploads
// (same checks, same account, same `url` to use as an input), and the preview of an uploaded image, which
// the browser cannot fetch from /v1 (that needs a key).
import type { FastifyInstance } from 'fastify';
import { UPLOAD_TYPES } from '../../services/uploads.ts';
import { sendError } from '../../web/error-handler.ts';
import { notFromThisSite, signedIn, type StudioCtx } from '../types.ts';

export function registerUploadRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const pre = { preHandler: signedIn(ctx) };
  // The raw image parsers exist in this scope only. The script sends the CSRF token as a header.
  app.register(async (up) => {
    // The script reads the answer: errors are the API's JSON body here, not a page (a missing or
    // stale token's too: 403 FORBIDDEN).
    up.setErrorHandler((err: Error & { code?: string }, req, reply) =>
      sendError(req, reply, err.code?.startsWith('FST_CSRF') ? notFromThisSite(req) : err),
    );
    up.addContentTypeParser(
      Object.keys(UPLOAD_TYPES),
      { parseAs: 'buffer', bodyLimit: ctx.config.uploadLimitBytes },
      (_req, body, done) => done(null, body),
    );
    up.post('/uploads', { ...pre, bodyLimit: ctx.config.uploadLimitBytes }, async (req, reply) => {
      const made = await ctx.uploads.create(
        req.principal,
        req.headers['content-type'],
        req.body as Buffer | undefined,
      );
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...made, preview: `/uploads/${made.id}` });
    });
  });

  app.get<{ Params: { id: string } }>('/uploads/:id', pre, async (req, reply) => {
    const u = await ctx.uploads.open(req.principal, req.params.id);
    return reply
      .type(u.contentType)
      .header('content-length', String(u.sizeBytes))
      .header('cache-control', 'private, max-age=300')
      .send(u.body);
  });
}
