// What the studio's route files share with its plugin (index.ts): the context they are given, the
// cookies, and the hook that requires a signed-in account. Its own module, so that the routes and
// the plugin that registers them do not import each other.
import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import type { Ctx } from '../web/context.ts';
import type { Session, Sessions } from '../services/sessions.ts';
import type { StudioAccounts } from '../services/studio-accounts.ts';
import type { History } from '../services/history.ts';
import type { Mailer } from '../services/mail.ts';
import type { SecondFactor } from '../services/second-factor.ts';
import type { SignInSteps } from '../services/sign-in-steps.ts';
import type { Sso } from '../services/sso.ts';
import type { ModelCard } from './presenters.ts';

/** The services only the studio uses, built by the composition root. */
export interface StudioServices {
  sessions: Sessions;
  studioAccounts: StudioAccounts;
  history: History;
  /** A person's second factor; the steps of a sign-in after the password; single sign-on. */
  secondFactor: SecondFactor;
  signInSteps: SignInSteps;
  sso: Sso | null;
  /** The API reference's sections (its OpenAPI tags), for the links atop /docs. */
  apiSections: string[];
}

export interface StudioCtx extends Ctx, StudioServices {
  secure: boolean;
  mailer: Mailer | null;
  cards: Map<string, ModelCard>;
}

declare module 'fastify' {
  interface FastifyRequest {
    studio: Session | null;
    topupsOn: boolean;
  }
}

export const SESSION_COOKIE = 'rg_session';
export const ADMIN_COOKIE = 'rg_admin';

/**
 * preHandler of pages for signed-in people: the session, or a redirect to the sign-in page. Every
 * request of a session counts against its account's per-minute limit, in the same limiter as keys
 * (RENDERGATE_RATE_LIMIT_PER_MINUTE per account); past it, 429 with a page that says so.
 */
export function signedIn(ctx: StudioCtx) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    await refuseSpent(ctx, req);
    req.studio = await ctx.sessions.find(req.cookies[SESSION_COOKIE], 'account');
    return admitted(ctx, req, reply);
  };
}

function rateLimited(limit: number, resetSeconds: number) {
  return new ApiError(
    'RATE_LIMITED',
    `This account made more than ${limit} requests in a minute. Wait ${resetSeconds} seconds and try again.`,
    undefined,
    { 'retry-after': String(resetSeconds) },
  );
}

/**
 * Throws the 429 of a session already refused in its current window, before the database is asked for
 * the session (or, on History, for the page read with it): a flood from one session over its limit
 * costs a hash and a map lookup a request (Sessions.spentSeconds), and its 429s come late once it
 * keeps coming (admission/refusal-pace.ts).
 */
export async function refuseSpent(ctx: StudioCtx, req: FastifyRequest): Promise<void> {
  const seconds = ctx.sessions.spentSeconds(req.cookies[SESSION_COOKIE]);
  if (seconds <= 0) return;
  await ctx.pace.pause(paceScope(req));
  throw rateLimited(ctx.config.defaultRateLimitPerMinute, seconds);
}

/** A session's scope for RefusalPace: a hash of its cookie, so no session id is kept in memory. */
const paceScope = (req: FastifyRequest) =>
  `session:${crypto
    .createHash('sha256')
    .update(req.cookies[SESSION_COOKIE] ?? '')
    .digest('base64url')}`;

/** What a member who must turn on two-factor may still open: their Account page, sign-out. */
const FACTOR_FREE = /^\/(account(\/|\?|$)|signout-everywhere$)/;

/**
 * The rest of signedIn() once `req.studio` is read (a page that reads its session along with its own
 * data does so itself): the redirect to sign in when there is no session (returned, for the caller to
 * return), the per-minute limit, else nothing.
 */
export async function admitted(ctx: StudioCtx, req: FastifyRequest, reply: FastifyReply) {
  if (!req.studio) {
    if (req.method === 'GET')
      return reply.redirect(`/signin?next=${encodeURIComponent(req.url)}`, 303);
    return reply.redirect('/signin', 303);
  }
  // Who acts on this page, made with the session (services/sessions.ts), for the services.
  req.principal = req.studio.principal;
  // An account that requires a second factor opens only the Account page (to turn it on) to a
  // member without one.
  if (req.studio.needsFactor && !FACTOR_FREE.test(req.url)) {
    if (req.method === 'GET') return reply.redirect('/account?two-factor=required', 303);
    throw new ApiError(
      'FORBIDDEN',
      'This account requires two-factor sign-in: turn it on on the Account page first.',
    );
  }
  const limit = ctx.config.defaultRateLimitPerMinute;
  const d = await ctx.limits.consume(req.studio.accountId!, limit);
  if (!d.allowed) {
    ctx.sessions.spentFor(req.cookies[SESSION_COOKIE], d.resetSeconds);
    await ctx.pace.pause(paceScope(req));
    throw rateLimited(limit, d.resetSeconds);
  }
}

/**
 * The 403 FORBIDDEN of a state-changing request that did not come from one of our pages (another
 * origin, or no valid CSRF token): what is missing, and what to do. Uploads say it of the upload.
 */
export function notFromThisSite(req: FastifyRequest): ApiError {
  return req.url.startsWith('/uploads')
    ? new ApiError(
        'FORBIDDEN',
        'This upload was not sent from this page, or the page has expired; ' +
          'reload it and try again.',
      )
    : new ApiError(
        'FORBIDDEN',
        'This form has expired or was not sent from this site. ' +
          'Go back, reload the page and try again.',
      );
}

/** The account in use of a request that passed signedIn(). Services take `req.principal`. */
export const accountOf = (req: FastifyRequest): string => req.studio!.accountId!;

/** The signed-in person of a request that passed signedIn(): their password and sessions. */
export const personOf = (req: FastifyRequest): string => req.studio!.personId!;

/** Options of the session cookies: HttpOnly, SameSite=Lax, Secure under https, scoped to `path`. */
export function sessionCookie(ctx: StudioCtx, path = '/') {
  return { path, httpOnly: true, sameSite: 'lax' as const, secure: ctx.secure };
}
