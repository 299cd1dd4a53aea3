// GET /v1/openapi.json and /admin/v1/openapi.json (no key: a generator or a reader needs the document
// before it has one; any origin) and the script of the browsable reference, RapiDoc, served from the
// npm package, so it works offline and loads nothing from another origin. The page itself, /docs, is
// the studio's (studio/routes/docs.ts), in the studio's look and with its header.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../web/context.ts';
import { buildOpenApiDocument } from './document.ts';
import { buildAdminOpenApiDocument } from './admin-document.ts';

const require = createRequire(import.meta.url);
const RAPIDOC = require.resolve('rapidoc/dist/rapidoc-min.js');

/**
 * The public documents answer any origin, so browser-hosted API tools (editors, mock servers) can load
 * them: they carry no credential and grant none. Keyed routes never answer CORS.
 */
function servePublicDocument(app: FastifyInstance, path: string, body: string) {
  app.get(path, (_req, reply) => {
    reply
      .header('cache-control', 'public, max-age=300')
      .header('access-control-allow-origin', '*')
      .type('application/json; charset=utf-8')
      .send(body);
  });
  // The preflight of a tool that adds a header of its own (Fetch standard, CORS protocol).
  app.options(path, (req, reply) => {
    const asked = req.headers['access-control-request-headers'];
    reply
      .code(204)
      .header('allow', 'GET, HEAD, OPTIONS')
      .header('access-control-allow-origin', '*')
      .header('access-control-allow-methods', 'GET, HEAD, OPTIONS')
      .header('access-control-max-age', '86400');
    if (typeof asked === 'string' && asked.length <= 1000)
      reply.header('access-control-allow-headers', asked);
    reply.send();
  });
}

/**
 * Registered on the root app, outside the /v1 and /admin/v1 plugins, so neither the key check of /v1
 * nor the admin token applies to the documents: they describe the APIs, they open nothing.
 */
export function registerOpenApi(app: FastifyInstance, ctx: Ctx) {
  const doc = buildOpenApiDocument(ctx.catalog, ctx.config.publicUrl);
  servePublicDocument(app, '/v1/openapi.json', JSON.stringify(doc));
  servePublicDocument(
    app,
    '/admin/v1/openapi.json',
    JSON.stringify(buildAdminOpenApiDocument(ctx.config.publicUrl)),
  );

  const script = { plain: fs.readFileSync(RAPIDOC), gzip: fs.readFileSync(RAPIDOC + '.gz') };
  app.get('/docs/rapidoc-min.js', (req, reply) => {
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    reply
      .header('cache-control', 'public, max-age=86400')
      .header('vary', 'accept-encoding')
      .type('text/javascript; charset=utf-8');
    if (gzip) reply.header('content-encoding', 'gzip');
    reply.send(gzip ? script.gzip : script.plain);
  });
}
