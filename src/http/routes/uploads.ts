// /v1/uploads: raw image bodies (their own size limit; the JSON limit stays for every other route),
// read back and deleted by the owning account.
import type { FastifyInstance } from 'fastify';
import { UPLOAD_TYPES, uploadType } from '../../services/uploads.ts';
import { parseLimit } from '../../services/paging.ts';
import { ApiError } from '../../domain/errors.ts';
import { queryParam } from '../body.ts';
import type { Ctx } from '../../web/context.ts';
import { sendError } from '../../web/error-handler.ts';

export function registerUploadRoutes(app: FastifyInstance, ctx: Ctx) {
  // A plugin of its own: the image parsers exist only here, so no other route accepts an image body.
  app.register(async (up) => {
    up.addContentTypeParser(
      Object.keys(UPLOAD_TYPES),
      { parseAs: 'buffer', bodyLimit: ctx.config.uploadLimitBytes },
      (_req, body, done) => done(null, body),
    );
    // A body of another type is refused naming the types this route takes (not JSON, as elsewhere).
    up.setErrorHandler((err: Error & { code?: string }, req, reply) =>
      sendError(
        req,
        reply,
        err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? new ApiError(
              'UNSUPPORTED_MEDIA_TYPE',
              `Send the image as ${Object.keys(UPLOAD_TYPES).join(', ')}.`,
            )
          : err,
      ),
    );

    up.get('/uploads', async (req) =>
      ctx.uploads.list(req.principal, {
        limit: parseLimit(queryParam(req.query, 'limit')),
        cursor: queryParam(req.query, 'cursor') ?? null,
      }),
    );

    up.post(
      '/uploads',
      {
        bodyLimit: ctx.config.uploadLimitBytes,
        // An account the quota has just refused is refused again before the body is read (an image
        // type's body; another type keeps its 415): no bytes read, no statement. The connection then
        // closes once the client has the answer (src/http/lingering-close.ts).
        preParsing: (req, reply, payload, done) => {
          const length = Number(req.headers['content-length'] ?? NaN);
          const refused =
            uploadType(req.headers['content-type']) !== undefined && length !== 0
              ? ctx.uploads.quota.early(
                  req.apiKey.accountId,
                  Number.isSafeInteger(length) ? length : null,
                )
              : null;
          // Answered at once, or late for an account that keeps sending past its quota
          // (admission/refusal-pace.ts); server.ts's onError hook then drains or closes.
          if (refused)
            ctx.pace.later(`uploads:${req.apiKey.accountId}`, () => done(refused, payload));
          else done(null, payload);
        },
      },
      async (req, reply) => {
        const made = await ctx.uploads
          .create(req.principal, req.headers['content-type'], req.body as Buffer | undefined)
          .catch(async (e: unknown) => {
            // the database's refusal (the memory's is answered in preParsing), and the 429 of
            // uploads coming too fast (admission/upload-turns.ts), paced the same way
            if (
              e instanceof ApiError &&
              (e.code === 'UPLOAD_QUOTA_EXCEEDED' || e.code === 'RATE_LIMITED')
            )
              await ctx.pace.pause(`uploads:${req.apiKey.accountId}`);
            throw e;
          });
        return reply.code(201).header('location', made.url).send(made);
      },
    );

    up.get<{ Params: { id: string } }>('/uploads/:id', async (req, reply) => {
      const u = await ctx.uploads.open(req.principal, req.params.id);
      return reply
        .type(u.contentType)
        .header('content-length', String(u.sizeBytes))
        .header('cache-control', 'private, max-age=0')
        .send(u.body);
    });

    up.delete<{ Params: { id: string } }>('/uploads/:id', async (req) =>
      ctx.uploads.delete(req.principal, req.params.id),
    );
  });
}
