// The studio: the web pages of Rendergate at `/`, in the same Fastify app and process as the API. It has
// its own cookies, form bodies and CSRF protection, all encapsulated in this plugin's scope: the /v1 API
// keeps refusing form bodies and never reads a cookie. Pages are rendered on the server from escaping
// templates; a little script (assets/studio.js) adds the live price and live status, and every page works
// without it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import csrf from '@fastify/csrf-protection';
import { ApiError } from '../domain/errors.ts';
import type { Ctx } from '../web/context.ts';
import { isUnavailable, sendError, toApiError } from '../web/error-handler.ts';
import { notFromThisSite, SESSION_COOKIE, type StudioCtx, type StudioServices } from './types.ts';
import { registerAssets } from './assets.ts';
import { page, SECURITY_HEADERS } from './view.ts';
import { registerAuthRoutes } from './routes/auth.ts';
import { registerSignInRoutes } from './routes/sign-in.ts';
import { registerTwoFactorRoutes } from './routes/two-factor.ts';
import { registerOidcRoutes } from './routes/oidc.ts';
import { registerRenderRoutes } from './routes/render.ts';
import { registerHistoryRoutes } from './routes/history.ts';
import { registerPosterRoutes } from './routes/poster.ts';
import { registerDocsRoutes } from './routes/docs.ts';
import { registerAuditRoutes } from './routes/audit.ts';
import { registerKeyRoutes } from './routes/keys.ts';
import { registerUsageRoutes } from './routes/usage.ts';
import { registerBudgetRoutes } from './routes/budgets.ts';
import { registerAdminConsole } from './routes/admin.ts';
import { registerUploadRoutes } from './routes/uploads.ts';
import { registerWebhookRoutes } from './routes/webhooks.ts';
import { registerCreditRoutes } from './routes/credit.ts';
import { registerMemberRoutes } from './routes/members.ts';
import { registerAccountNameRoutes } from './routes/account-name.ts';
import { smtpMailer } from '../services/mail.ts';
import { modelCards } from './presenters.ts';

/** The origins allowed to post to the studio: the public URL's, and the one the request itself was sent to. */
function sameOrigin(req: FastifyRequest, publicUrl: string): boolean {
  let sent = req.headers.origin;
  if (sent === undefined || sent === 'null') {
    // Browsers send Origin on every cross-site POST; without it, fall back on the Referer's origin.
    const ref = req.headers.referer;
    if (!ref) return false;
    try {
      sent = new URL(ref).origin;
    } catch {
      return false;
    }
  }
  const own = new URL(publicUrl).origin;
  const self = `${req.protocol}://${req.headers.host ?? ''}`;
  return sent === own || sent === self;
}

/**
 * The studio's 404 page for any other unknown address, signed in or not (with the header when signed in),
 * never the API's JSON. It answers from the root's not-found handler, outside the studio's scope: the
 * session cookie is read here, and the page carries no form that needs a CSRF token.
 */
function notFoundPage(ctx: StudioCtx) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const id = new RegExp(`(?:^|;\\s*)${SESSION_COOKIE}=([^;]*)`).exec(
      req.headers.cookie ?? '',
    )?.[1];
    req.studio = await ctx.sessions.find(id, 'account');
    reply.headers(SECURITY_HEADERS);
    return page(reply.code(404), 'error', req, {
      title: 'Page not found',
      message: 'There is no page at this address. It may have moved, or the link may be mistyped.',
    });
  };
}

export async function registerStudio(app: FastifyInstance, base: Ctx, services: StudioServices) {
  const mailer = base.config.smtpUrl ? smtpMailer(base.config.smtpUrl, base.config.mailFrom) : null;
  const ctx: StudioCtx = {
    ...base,
    ...services,
    secure: base.config.publicUrl.startsWith('https:'),
    mailer,
    cards: modelCards(base.catalog),
  };
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: 'rg_csrf',
    cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true, secure: ctx.secure },
  });
  app.decorateRequest('studio', null);
  app.decorateRequest('principal', null as never);
  app.decorateRequest('topupsOn', false);

  app.addHook('onRequest', (req, reply, done) => {
    // An asterisk or absolute-form target is no page: the API's own 400.
    if (req.url[0] !== '/') {
      sendError(req, reply, new ApiError('INVALID_REQUEST', 'The request target must be a path.'));
      return;
    }
    reply.headers(SECURITY_HEADERS);
    req.topupsOn = ctx.topups !== null; // the layout's Add credit
    done();
  });
  // Every state-changing request: from our own origin (another site, or another port of this host, is
  // another origin) and carrying the form's CSRF token.
  app.addHook('preHandler', (req, reply, done) => {
    if (req.method === 'GET' || req.method === 'HEAD') {
      done();
      return;
    }
    if (!sameOrigin(req, ctx.config.publicUrl)) {
      done(notFromThisSite(req));
      return;
    }
    app.csrfProtection(req, reply, done);
  });

  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, req, reply) => {
    // A missing or stale form token is a 403 FORBIDDEN page saying so, like any refusal (a role's
    // too); a database away or frozen is a 503 with Retry-After, as on the API, not a bug's 500.
    const e =
      err instanceof ApiError
        ? err
        : err.code?.startsWith('FST_CSRF')
          ? notFromThisSite(req)
          : isUnavailable(err)
            ? toApiError(err)
            : null;
    if (!e) req.log.error({ err }, 'studio error');
    else if (e.code === 'SERVICE_UNAVAILABLE') req.log.warn({ err }, 'dependency unavailable');
    if (e?.headers) reply.headers(e.headers);
    const status = e?.status ?? (err.statusCode && err.statusCode < 500 ? err.statusCode : 500);
    const title =
      status === 503
        ? 'Briefly unavailable'
        : status >= 500
          ? 'Something went wrong'
          : status === 404
            ? 'Not found'
            : status === 429
              ? 'Too many requests'
              : status === 403
                ? 'Not allowed'
                : 'Not possible';
    const message =
      e?.message ??
      (status >= 500
        ? 'An internal error occurred; it has been logged. Try again in a moment.'
        : 'The request could not be handled.');
    return page(reply.code(status), 'error', req, {
      title,
      message,
      status,
      admin: req.url.startsWith('/admin'),
    });
  });

  registerAssets(app);
  registerAuthRoutes(app, ctx);
  registerSignInRoutes(app, ctx);
  registerTwoFactorRoutes(app, ctx);
  registerOidcRoutes(app, ctx);
  registerRenderRoutes(app, ctx);
  registerHistoryRoutes(app, ctx);
  registerPosterRoutes(app, ctx);
  registerDocsRoutes(app, ctx);
  registerKeyRoutes(app, ctx);
  registerUsageRoutes(app, ctx);
  registerBudgetRoutes(app, ctx);
  registerAdminConsole(app, ctx);
  registerUploadRoutes(app, ctx);
  registerWebhookRoutes(app, ctx);
  registerCreditRoutes(app, ctx);
  registerAuditRoutes(app, ctx);
  registerMemberRoutes(app, ctx);
  registerAccountNameRoutes(app, ctx);
  return notFoundPage(ctx);
}
