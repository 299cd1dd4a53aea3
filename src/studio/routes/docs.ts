// /docs: the API reference (RapiDoc over /v1/openapi.json, its script served by http/openapi) as a
// page of the studio: its header (with the account's when signed in, so the way back is there), its
// colours and type, and links to the reference's sections that work at any width (RapiDoc hides its
// own navigation on a phone). Open to everyone: the reference is public, as the document is.
import type { FastifyInstance } from 'fastify';
import { SESSION_COOKIE, type StudioCtx } from '../types.ts';
import { page, SECURITY_HEADERS } from '../view.ts';

// RapiDoc styles its shadow DOM with inline styles and embeds its icons as data: fonts; the rest is
// the studio's own policy.
const CSP = SECURITY_HEADERS['content-security-policy']
  .replace(
    "default-src 'self'",
    "default-src 'self'; script-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'",
  )
  .concat('; font-src data:');

export function registerDocsRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const sections = ctx.apiSections.map((name) => ({
    name,
    // RapiDoc's own ids of its sections (`tag--<name>`, with these characters as `-`).
    href: `#tag--${name.replace(/[\s#:?&={}]/g, '-')}`,
  }));
  app.get('/docs', async (req, reply) => {
    req.studio = await ctx.sessions.find(req.cookies[SESSION_COOKIE], 'account');
    return page(reply.header('content-security-policy', CSP), 'docs', req, {
      title: 'API reference',
      apiReference: true,
      sections,
    });
  });
}
