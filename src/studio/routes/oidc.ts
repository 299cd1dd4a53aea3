// Single sign-on's two routes (docs/studio.md "Single sign-on"): Sign in with <name> starts the
// flow, and the provider sends the browser back to the callback. Any failure is the sign-in page
// saying why. The start is a link, not a form: browsers apply the page's `form-action 'self'` to
// a form's redirect too, and the provider is another origin. Another site starting one for a
// visitor gains nothing: the callback is bound to the browser that started it, and signs in only
// whoever the provider signs in there.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StudioCtx } from '../types.ts';
import { localPath } from '../form-body.ts';
import { doorBudget } from '../door-budget.ts';
import { sourceOf } from '../../web/audit-source.ts';
import { signinPage, startSession } from '../sign-in-pages.ts';
import { REQUEST_TTL_S, SsoFailure } from '../../services/sso.ts';

/** Binds a sign-in under way to the browser that started it; only the callback reads it. */
const BROWSER_COOKIE = 'rg_oidc';

export function registerOidcRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const sso = ctx.sso;
  if (!sso) return;
  const door = { preValidation: doorBudget(ctx.config.studioDoorRequestsPerMinute, ctx.pace) };
  // Lax: the provider's redirect back is a top-level GET from its site, which Lax lets through.
  const cookie = {
    path: '/auth/oidc',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: ctx.secure,
    maxAge: REQUEST_TTL_S,
  };
  const failedPage = (req: FastifyRequest, reply: FastifyReply, e: unknown) => {
    if (!(e instanceof SsoFailure)) throw e;
    if (e.reason === 'unreachable') req.log.warn({ err: e.cause }, 'sign-in provider unreachable');
    return signinPage(ctx, req, reply.code(e.status), { error: e.message });
  };

  app.get<{ Querystring: { next?: string } }>('/auth/oidc/start', door, async (req, reply) => {
    try {
      const { url, browser } = await sso.start(localPath(req.query.next));
      reply.setCookie(BROWSER_COOKIE, browser, cookie);
      return reply.redirect(url, 303);
    } catch (e) {
      return failedPage(req, reply, e);
    }
  });

  // The code and state travel in the query: no access-log line carries them.
  app.get('/auth/oidc/callback', { ...door, logLevel: 'warn' as const }, async (req, reply) => {
    const url = new URL(req.url, `${ctx.config.publicUrl}/`);
    let who;
    try {
      who = await sso.finish(url, req.cookies[BROWSER_COOKIE], sourceOf(req));
    } catch (e) {
      return failedPage(req, reply, e);
    } finally {
      reply.clearCookie(BROWSER_COOKIE, cookie);
    }
    const details = who.first ? { firstSignIn: true } : undefined;
    return startSession(ctx, req, reply, who, 'sso', who.next, details);
  });
}
