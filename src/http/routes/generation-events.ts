// GET /v1/generations/{id}/events: a render's live events as server-sent events (docs/api.md "Live
// events of a render"). The checks (key, rate limit, 404, the streams' bound) answer with the usual
// JSON error before the stream opens; web/event-stream.ts writes it.
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../web/context.ts';
import { eventStreams, sendEventStream } from '../../web/event-stream.ts';

export function registerGenerationEvents(app: FastifyInstance, ctx: Ctx) {
  const open = eventStreams(app);
  app.get<{ Params: { id: string } }>('/generations/:id/events', async (req, reply) => {
    const stream = await ctx.generations.events(
      req.principal,
      req.params.id,
      req.headers['last-event-id'],
    );
    await sendEventStream(req, reply, stream, { keepAliveMs: ctx.config.eventKeepAliveMs, open });
  });
}
