// The studio: the web pages of Rendergate at `/`, in the same Fastify app and process as the API. It has
// its own cookies, form bodies and CSRF protection, all encapsulated in this plugin's scope: the /v1 API
// keeps refusing form bodies and never reads a cookie. Pages are rendered on the server from escaping
// templates; a little script (assets/studio.js) adds the live price and live status, and every page works
// without it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import csrf from '@fastify/csrf-protection';
import { ApiError } from '../domain/errors.ts';
import type { Ctx } from '../web/context.ts';
import { sendError } from '../web/error-handler.ts';
import { type StudioCtx, type StudioServices } from './types.ts';
import { registerAssets } from './assets.ts';
import { page, SECURITY_HEADERS } from './view.ts';
import { registerAuthRoutes } from './routes/auth.ts';
import { registerRenderRoutes } from './routes/render.ts';
import { registerHistoryRoutes } from './routes/history.ts';
import { registerKeyRoutes } from './routes/keys.ts';
import { registerUsageRoutes } from './routes/usage.ts';
import { registerAdminConsole } from './routes/admin.ts';
import { registerUploadRoutes } from './routes/uploads.ts';
import { smtpMailer } from './mail.ts';

/** The origins allowed to post to the studio: the public URL's, and the one the request itself was sent to. */
function sameOrigin(req: FastifyRequest, publicUrl: string): boolean {
  let sent = req.headers.origin;
  if (sent === undefined || sent === 'null') {
    // Browsers send Origin on every cross-site POST; without it, fall back on the Referer's origin.
    const ref = req.headers.referer;
    if (!ref) return false;
    try { sent = new URL(ref).origin; } catch { return false; }
  }
  const own = new URL(publicUrl).origin;
  const self = `${req.protocol}://${req.headers.host ?? ''}`;
  return sent === own || sent === self;
}

export async function registerStudio(app: FastifyInstance, base: Ctx, services: StudioServices) {
  const mailer = base.config.smtpUrl ? smtpMailer(base.config.smtpUrl, base.config.mailFrom) : null;
  const ctx: StudioCtx = { ...base, ...services, secure: base.config.publicUrl.startsWith('https:'), mailer };
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(csrf, {
    sessionPlugin: '@fastify/cookie', cookieKey: 'rg_csrf',
    cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true, secure: ctx.secure },
  });
  app.decorateRequest('studio', null);

  app.addHook('onRequest', (req, reply, done) => {
    // An asterisk or absolute-form target is no page: the API's own 400.
    if (req.url[0] !== '/') { sendError(req, reply, new ApiError('INVALID_REQUEST', 'The request target must be a path.')); return; }
    reply.headers(SECURITY_HEADERS);
    done();
  });
  // Every state-changing request: from our own origin (another site, or another port of this host, is
  // another origin) and carrying the form's CSRF token.
  app.addHook('preHandler', (req, reply, done) => {
    if (req.method === 'GET' || req.method === 'HEAD') { done(); return; }
    if (!sameOrigin(req, ctx.config.publicUrl)) { done(Object.assign(new Error('foreign origin'), { code: 'FST_CSRF_FOREIGN_ORIGIN', statusCode: 403 })); return; }
    app.csrfProtection(req, reply, done);
  });

  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, req, reply) => {
    if (err.code?.startsWith('FST_CSRF')) return page(reply.code(403), 'error', req, { title: 'Refused', message: 'This form has expired or was not sent from this site. Go back, reload the page and try again.' });
    const e = err instanceof ApiError ? err : null;
    if (!e) req.log.error({ err }, 'studio error');
    const status = e?.status ?? (err.statusCode && err.statusCode < 500 ? err.statusCode : 500);
    return page(reply.code(status), 'error', req, { title: status >= 500 ? 'Something went wrong' : 'Not possible', message: e?.message ?? (status >= 500 ? 'An internal error occurred; it has been logged.' : 'The request could not be handled.') });
  });

  registerAssets(app);
  registerAuthRoutes(app, ctx);
  registerRenderRoutes(app, ctx);
  registerHistoryRoutes(app, ctx);
  registerKeyRoutes(app, ctx);
  registerUsageRoutes(app, ctx);
  registerAdminConsole(app, ctx);
  registerUploadRoutes(app, ctx);
}
