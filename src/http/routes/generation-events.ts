// GET /v1/generations/{id}/events: a render's live events as server-sent events (docs/api.md "Live
// events of a render"). The checks (key, rate limit, 404, the streams' bound) answer with the usual
// JSON error; once the stream is open the reply is Fastify's no more (hijacked) and this module
// writes the events, a comment line between them so that proxies keep it open, and ends it after
// the final state. A client that goes away ends the stream and gives its place back at once.
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../web/context.ts';

export const EVENT_STREAM_TYPE = 'text/event-stream; charset=utf-8';

export function registerGenerationEvents(app: FastifyInstance, ctx: Ctx) {
  // Open streams end when the server closes, which would otherwise wait for them.
  const open = new Set<() => void>();
  app.addHook('preClose', (done) => {
    for (const end of open) end();
    done();
  });
  app.get<{ Params: { id: string } }>('/generations/:id/events', async (req, reply) => {
    const stream = await ctx.generations.events(
      req.principal,
      req.params.id,
      req.headers['last-event-id'],
    );
    const res = reply.raw;
    reply.hijack();
    res.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': EVENT_STREAM_TYPE,
      'cache-control': 'no-store',
      // nginx would otherwise hold the events back in its buffer
      'x-accel-buffering': 'no',
    });
    // the server's idle timeout must not close a stream that is quiet between comment lines
    req.raw.socket?.setTimeout(0);
    res.flushHeaders();
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), ctx.config.eventKeepAliveMs);
    keepAlive.unref();
    const end = () => {
      clearInterval(keepAlive);
      open.delete(end);
      stream.close();
    };
    open.add(end);
    res.once('close', end);
    // gone while the stream was opened: its close has already been emitted
    if (res.destroyed || req.raw.destroyed) end();
    try {
      for (;;) {
        const e = await stream.next();
        if (e === null || res.destroyed) break;
        res.write(`event: generation\nid: ${e.id}\ndata: ${e.json}\n\n`);
      }
    } catch (err) {
      req.log.error({ err }, 'event stream failed');
    } finally {
      end();
      res.end();
    }
  });
}
