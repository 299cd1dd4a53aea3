// GET /v1/openapi.json (no key: a generator or a reader needs the document before it has one) and the
// browsable reference at /docs, a RapiDoc page served from the npm package, so it works offline and
// loads nothing from another origin (its Content-Security-Policy allows only this one).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../web/context.ts';
import { buildOpenApiDocument } from './document.ts';
import { buildAdminOpenApiDocument } from './admin-document.ts';

const require = createRequire(import.meta.url);
const RAPIDOC = require.resolve('rapidoc/dist/rapidoc-min.js');

/** The page: a bar with the way back to the studio and the document's sections (RapiDoc hides its own
 * navigation on a phone; these links work at any width, as RapiDoc follows the address's #fragment). */
const page = (tags: string[]) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Rendergate API reference</title><link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<script type="module" src="/docs/rapidoc-min.js"></script>
<style>body{margin:0;font-family:system-ui,sans-serif}.bar{display:flex;flex-wrap:wrap;gap:4px 16px;align-items:center;
padding:8px 12px;border-bottom:1px solid #dde0e6;background:#fff}.bar a{color:#2f55d4;padding:6px 0}.bar .home{font-weight:700;
color:#1b1d22;text-decoration:none}.bar nav{display:flex;flex-wrap:wrap;gap:4px 14px}
.bar a:focus-visible{outline:3px solid #2f55d4;outline-offset:2px}rapi-doc{height:calc(100vh - 50px)}</style></head>
<body><header class="bar"><a class="home" href="/">Rendergate</a><nav aria-label="API sections">
${tags.map((t) => `<a href="#tag--${t.replace(/[\s#:?&={}]/g, '-')}">${t}</a>`).join('')}</nav></header>
<main><rapi-doc spec-url="/v1/openapi.json" render-style="read" show-header="false" allow-try="false" allow-authentication="false"
 allow-server-selection="false" schema-style="table" load-fonts="false" regular-font="system-ui, sans-serif"
 mono-font="ui-monospace, monospace" theme="light"></rapi-doc></main></body></html>`;

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

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
  const body = JSON.stringify(doc);
  const html = page(((doc.tags ?? []) as { name: string }[]).map((t) => t.name));
  servePublicDocument(app, '/v1/openapi.json', body);
  servePublicDocument(
    app,
    '/admin/v1/openapi.json',
    JSON.stringify(buildAdminOpenApiDocument(ctx.config.publicUrl)),
  );

  const script = { plain: fs.readFileSync(RAPIDOC), gzip: fs.readFileSync(RAPIDOC + '.gz') };
  app.get('/docs', (_req, reply) => {
    reply.header('content-security-policy', CSP).type('text/html; charset=utf-8').send(html);
  });
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
