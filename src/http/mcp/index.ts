// /mcp: the Model Context Protocol over Streamable HTTP (docs/mcp.md), with the official SDK's
// server. Stateless: every POST is a whole exchange (the SDK's transport answers it as JSON), so
// any API process answers any call and nothing is kept between them. The key and its rate limit
// are checked by the same hook as /v1 before the SDK sees the request; each tool call runs as the
// key's principal (tools.ts).
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../../domain/errors.ts';
import type { Principal } from '../../domain/principal.ts';
import { VERSION } from '../../domain/version.ts';
import type { Ctx } from '../../web/context.ts';
import { hijack } from '../../web/hijack.ts';
import { keyAndRateLimit } from '../v1.ts';
import { mcpTools, type Tool } from './tools.ts';

/** A tool's answer: the object as JSON text and as structured content. */
const answer = (value: unknown, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: value as Record<string, unknown>,
  ...(isError ? { isError: true } : {}),
});

/** A /v1 error as a tool error carrying its code; anything else is a bug, logged. */
function toolError(e: unknown, log: (e: unknown) => void): CallToolResult {
  if (e instanceof ApiError)
    return answer(
      { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) },
      true,
    );
  log(e);
  return answer({ code: 'INTERNAL_ERROR', message: 'Something went wrong on our side.' }, true);
}

/** One exchange's server: the tools, run as `p`, aborted when the client goes away. */
function serverFor(tools: Tool[], p: Principal, closed: AbortSignal, log: (e: unknown) => void) {
  const server = new Server(
    { name: 'rendergate', title: 'Rendergate', version: VERSION },
    { capabilities: { tools: {} } },
  );
  const byName = new Map(tools.map((t) => [t.name, t]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map(({ run: _, ...t }) => t),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const tool = byName.get(req.params.name);
    if (!tool)
      return toolError(new ApiError('NOT_FOUND', `No tool ${req.params.name.slice(0, 100)}.`), log);
    try {
      const signal = AbortSignal.any([closed, extra.signal]);
      return answer(await tool.run(p, req.params.arguments ?? {}, signal));
    } catch (e) {
      return toolError(e, log);
    }
  });
  return server;
}

const NOT_ALLOWED = JSON.stringify({
  jsonrpc: '2.0',
  error: { code: -32000, message: 'This server is stateless: POST each message to /mcp.' },
  id: null,
});

export async function registerMcp(app: FastifyInstance, ctx: Ctx) {
  app.decorateRequest('apiKey', null as never);
  app.decorateRequest('principal', null as never);
  // RFC 6750: a request without a usable key is told how to authenticate (the MCP authorization spec)
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (reply.statusCode === 401) reply.header('www-authenticate', 'Bearer');
    done(null, payload);
  });
  app.addHook('onRequest', keyAndRateLimit(ctx));
  const tools = mcpTools(ctx);
  app.post('/', async (req, reply) => {
    const res = reply.raw;
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const log = (err: unknown) => req.log.error({ err }, 'MCP tool failed');
    const server = serverFor(tools, req.principal, gone.signal, log);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    hijack(req, reply);
    for (const [k, v] of Object.entries(reply.getHeaders() as OutgoingHttpHeaders))
      if (v !== undefined) res.setHeader(k, v);
    res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req.raw, res, req.body);
  });
  // Stateless: no stream of the server's own messages to GET, no session to DELETE.
  for (const method of ['GET', 'DELETE'] as const)
    app.route({
      method,
      url: '/',
      handler: (_req, reply) =>
        reply.code(405).header('allow', 'POST').type('application/json').send(NOT_ALLOWED),
    });
}
