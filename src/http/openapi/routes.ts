// GET /v1/openapi.json (no key: a generator or a reader needs the document before it has one) and the
// script of the browsable reference, RapiDoc, served from the npm package, so it works offline and
// loads nothing from another origin. The page itself, /docs, is the studio's
// (studio/routes/docs.ts), in the studio's look and with its header.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../web/context.ts';
import { buildOpenApiDocument } from './document.ts';

const require = createRequire(import.meta.url);
const RAPIDOC = require.resolve('rapidoc/dist/rapidoc-min.js');

/** Registered on the root app, outside the /v1 plugin, so the key check of /v1 does not apply to it. */
export function registerOpenApi(app: FastifyInstance, ctx: Ctx) {
  const doc = buildOpenApiDocument(ctx.catalog, ctx.config.publicUrl);
  const body = JSON.stringify(doc);
  app.get('/v1/openapi.json', (_req, reply) => {
    reply
      .header('cache-control', 'public, max-age=300')
      .type('application/json; charset=utf-8')
      .send(body);
  });

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
