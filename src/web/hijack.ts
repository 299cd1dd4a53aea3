// A reply handed over to its route (Fastify's hijack: server-sent events, MCP's transport) is logged
// and counted by Fastify when it finishes, but not when the client goes away first: then the socket
// closes with no 'finish', and Fastify's onResponse (the access line, the request metrics) never
// runs. For a stream that is the usual end (a browser tab closed, an agent done). The server says here
// what to do then (http/server.ts), so every stream is one line and one request, with its duration.
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The server's end of a hijacked reply its client left: its access line and request metrics. */
export type HijackedEnd = (req: FastifyRequest, reply: FastifyReply) => void;

declare module 'fastify' {
  interface FastifyInstance {
    hijackedEnd?: HijackedEnd;
  }
}

/** Takes the reply out of Fastify's hands; the server's `hijackedEnd` runs if it closes unfinished. */
export function hijack(req: FastifyRequest, reply: FastifyReply): void {
  reply.hijack();
  const end = req.server.hijackedEnd;
  if (end)
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) end(req, reply);
    });
}
