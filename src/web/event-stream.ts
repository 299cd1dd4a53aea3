// Writes a render's live events (services/generation-events.ts) as server-sent events on a reply,
// for the API's route (http/routes/generation-events.ts) and the studio's (EventSource on the
// History and generation pages): the reply is Fastify's no more (hijacked) once the stream is
// open; a comment line between events keeps proxies from closing it; it ends after the final
// state, and a client that goes away ends it and gives its place back at once.
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EventStream } from '../services/generation-events.ts';
import { hijack } from './hijack.ts';

export const EVENT_STREAM_TYPE = 'text/event-stream; charset=utf-8';

/** Open streams of a server, ended when it closes (its close would otherwise wait for them). */
export function eventStreams(app: FastifyInstance): Set<() => void> {
  const open = new Set<() => void>();
  app.addHook('preClose', (done) => {
    for (const end of open) end();
    done();
  });
  return open;
}

export async function sendEventStream(
  req: FastifyRequest,
  reply: FastifyReply,
  stream: EventStream,
  o: { keepAliveMs: number; open: Set<() => void> },
): Promise<void> {
  const res = reply.raw;
  hijack(req, reply);
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
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), o.keepAliveMs);
  keepAlive.unref();
  const end = () => {
    clearInterval(keepAlive);
    o.open.delete(end);
    stream.close();
  };
  o.open.add(end);
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
}
