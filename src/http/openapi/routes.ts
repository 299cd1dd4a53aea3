// GET /v1/openapi.json (no key: a generator or a reader needs the document before it has one) and the
// browsable reference at /docs, a RapiDoc page served from the npm package, so it works offline and
// loads nothing from another origin (its Content-Security-Policy allows only this one).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../web/context.ts';
import { buildOpenApiDocument } from './document.ts';

const require = createRequire(import.meta.url);
const RAPIDOC = require.resolve('rapidoc/dist/rapidoc-min.js');

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Rendergate API reference</title><script type="module" src="/docs/rapidoc-min.js"></script></head>
<body style="margin:0"><rapi-doc spec-url="/v1/openapi.json" render-style="read" show-header="false" allow-try="false" allow-authentication="false"
 allow-server-selection="false" schema-style="table" regular-font="system-ui, sans-serif" mono-font="ui-monospace, monospace"
 theme="light"></rapi-doc></body></html>`;

const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Registered on the root app, outside the /v1 plugin, so the key check of /v1 does not apply to it. */
export function registerOpenApi(app: FastifyInstance, ctx: Ctx) {
  const body = JSON.stringify(buildOpenApiDocument(ctx.catalog, ctx.config.publicUrl));
  app.get('/v1/openapi.json', (_req, reply) => {
    reply.header('cache-control', 'public, max-age=300').type('application/json; charset=utf-8').send(body);
  });

  const script = { plain: fs.readFileSync(RAPIDOC), gzip: fs.readFileSync(RAPIDOC + '.gz') };
  app.get('/docs', (_req, reply) => {
    reply.header('content-security-policy', CSP).type('text/html; charset=utf-8').send(PAGE);
  });
  app.get('/docs/rapidoc-min.js', (req, reply) => {
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    reply.header('cache-control', 'public, max-age=86400').header('vary', 'accept-encoding').type('text/javascript; charset=utf-8');
    if (gzip) reply.header('content-encoding', 'gzip');
    reply.send(gzip ? script.gzip : script.plain);
  });
}
