// A render's still for History's rows (queue/poster.ts took it when the video was stored): the rows
// show it instead of a player each, and the player is on the render's own page. A render whose
// poster could not be made, or was stored before posters existed, gets a placeholder instead.
import type { FastifyInstance } from 'fastify';
import { readPoster } from '../../web/poster.ts';
import { signedIn, type StudioCtx } from '../types.ts';

/** 16:9, the studio's own greys, a play sign: what a row shows for a video without a still. */
const PLACEHOLDER =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 160 90" width="160" height="90">' +
  '<rect width="160" height="90" fill="#e4e7ed"/><circle cx="80" cy="45" r="18" fill="#fff"/>' +
  '<path d="M74 36v18l15-9z" fill="#5b6170"/></svg>';

export function registerPosterRoutes(app: FastifyInstance, ctx: StudioCtx) {
  app.get<{ Params: { id: string } }>(
    '/history/:id/poster',
    { preHandler: signedIn(ctx) },
    async (req, reply) => {
      const c = await ctx.generations.content(req.principal, req.params.id);
      // A render's output never changes, nor its still: a day in the browser's own cache.
      reply.header('cache-control', 'private, max-age=86400');
      const still = await readPoster(ctx.storage, c);
      if (!still) return reply.type('image/svg+xml').send(PLACEHOLDER);
      return reply.type('image/jpeg').send(still);
    },
  );
}
