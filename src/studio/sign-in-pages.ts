// What the studio's ways in share (routes/sign-in.ts, routes/oidc.ts, routes/auth.ts): opening
// the session a sign-in earns, and the sign-in page, with an error saying why when one failed.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE, sessionCookie, type StudioCtx } from './types.ts';
import { page } from './view.ts';
import { localPath } from './form-body.ts';
import { sourceOf } from '../web/audit-source.ts';

/**
 * A session for a person signed in (`via`: how, audited with `details`), and the redirect to
 * `next`. A person who is a member of no account any more has nothing to open, and is told so.
 */
export async function startSession(
  ctx: StudioCtx,
  req: FastifyRequest,
  reply: FastifyReply,
  who: { personId: string; accountId: string | null },
  via: string,
  next = '/',
  details?: Record<string, unknown>,
) {
  if (who.accountId === null)
    return page(reply.code(403), 'error', req, {
      title: 'No account',
      message: 'You are not a member of any account here any more. Ask an owner to invite you.',
    });
  const id = await ctx.sessions.create(
    { personId: who.personId, accountId: who.accountId },
    { ...sourceOf(req), via, details },
  );
  reply.setCookie(SESSION_COOKIE, id, sessionCookie(ctx));
  return reply.redirect(localPath(next), 303);
}

/** The sign-in page (with Sign in with <name> when single sign-on is set up). */
export function signinPage(
  ctx: StudioCtx,
  req: FastifyRequest,
  reply: FastifyReply,
  extra: Record<string, unknown> = {},
) {
  return page(reply, 'signin', req, {
    title: 'Sign in',
    signupOpen: ctx.config.signupOpen,
    canReset: ctx.mailer !== null,
    sso: ctx.config.oidc ? ctx.config.oidc.name : null,
    ...extra,
  });
}
