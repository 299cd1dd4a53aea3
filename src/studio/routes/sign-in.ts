// Signing in with a password (docs/studio.md "Signing in"): throttled, the same answer whatever
// is wrong; then, for a person with a second factor, their code (wrong codes count like wrong
// passwords); past the per-email ceiling of wrong passwords, a right password never opens a
// session at once: it goes on to the code, or, without a second factor, to a one-time sign-in
// link mailed to the address, so nobody can lock an owner out by guessing at their email.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE, type StudioCtx } from '../types.ts';
import { page } from '../view.ts';
import { field, localPath } from '../form-body.ts';
import { doorRefusalPause } from '../../admission/door-budget.ts';
import { doorBudget } from '../door-budget.ts';
import { sourceOf } from '../../web/audit-source.ts';
import { signinPage, startSession } from '../sign-in-pages.ts';
import { CHALLENGE_TTL_S } from '../../services/sign-in-steps.ts';

/** The challenge's cookie: only the code step reads it. */
const CHALLENGE_COOKIE = 'rg_signin';

export function registerSignInRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const door = { preValidation: doorBudget(ctx.config.studioDoorRequestsPerMinute, ctx.pace) };
  const challengeCookie = {
    path: '/signin',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: ctx.secure,
    maxAge: CHALLENGE_TTL_S,
  };
  // Audited for a known email; not awaited, so the answer's time does not tell it from an unknown.
  const failed = (req: FastifyRequest, email: string, reason: 'password' | 'code') =>
    void ctx.studioAccounts
      .signInFailed(email, sourceOf(req), reason)
      .catch((e: unknown) => req.log.warn({ err: e }, 'failed sign-in not audited'));
  // A throttle's 429, late for an address that keeps coming; `answer` sends its page. (A reply is
  // a thenable: awaited before it is sent, it would wait for itself.)
  const refused = async (
    req: FastifyRequest,
    reply: FastifyReply,
    retryAfterS: number,
    answer: (r: FastifyReply) => FastifyReply,
  ) => {
    await doorRefusalPause(ctx.pace, req.ip);
    return answer(reply.code(429).header('retry-after', String(retryAfterS)));
  };

  app.get<{ Querystring: { next?: string } }>('/signin', door, async (req, reply) => {
    if (await ctx.sessions.find(req.cookies[SESSION_COOKIE], 'account'))
      return reply.redirect(localPath(req.query.next), 303);
    return signinPage(ctx, req, reply, { next: localPath(req.query.next) });
  });

  app.post('/signin', door, async (req, reply) => {
    const email = (field(req.body, 'email') ?? '').trim().slice(0, 254);
    const password = field(req.body, 'password') ?? '';
    const next = localPath(field(req.body, 'next'));
    // Counted before the password is checked, so parallel tries count one each; a right one is given back.
    const taken = await ctx.studioAccounts.signInAttempt(req.ip, email);
    if (!taken.ok)
      return refused(req, reply, taken.retryAfterS, (r) =>
        signinPage(ctx, req, r, {
          email,
          next,
          error: 'Too many sign-in attempts. Wait a quarter of an hour and try again.',
        }),
      );
    const person = await ctx.studioAccounts.givenBackIfBusy(
      [taken.counted],
      ctx.studioAccounts.checkPassword(email, password),
    );
    if (!person) {
      failed(req, email, 'password');
      // past the email's ceiling a wrong password is refused as before the ceiling was met
      if (taken.ceiling)
        return refused(req, reply, 900, (r) =>
          signinPage(ctx, req, r, {
            email,
            next,
            error: 'Too many sign-in attempts. Wait a quarter of an hour and try again.',
          }),
        );
      return signinPage(ctx, req, reply.code(401), {
        email,
        next,
        error: 'The email or the password is wrong.',
      });
    }
    await ctx.studioAccounts.succeeded(taken.counted);
    if (await ctx.signInSteps.hasFactor(person.personId)) {
      const id = await ctx.signInSteps.challenge(person.personId, 'password', next);
      reply.setCookie(CHALLENGE_COOKIE, id, challengeCookie);
      return reply.redirect('/signin/code', 303);
    }
    if (!taken.ceiling) return startSession(ctx, req, reply, person, 'password', next);
    // Past the ceiling, without a second factor: a link to the address proves the mailbox too.
    if (!ctx.mailer || person.accountId === null)
      return refused(req, reply, 900, (r) =>
        signinPage(ctx, req, r, {
          email,
          next,
          error:
            'Too many sign-in attempts were made with this email. Wait a quarter of an hour, ' +
            'or ask the operator for a sign-in link.',
        }),
      );
    const link = await ctx.signInSteps.signInLink(person.personId, person.accountId);
    await ctx.mailer
      .send(
        email,
        'Your Rendergate sign-in link',
        `Many wrong passwords were tried with this email, so signing in takes this link too.\n\nSign in (the link works once, within 15 minutes):\n${link}\n\nIf you did not just sign in, change your password and turn on two-factor.\n`,
      )
      .catch((e: unknown) => req.log.warn({ err: e }, 'sign-in link not sent'));
    return signinPage(ctx, req, reply.code(202), {
      email,
      next,
      notice:
        'Many wrong passwords were tried with this email, so we mailed you a sign-in link. ' +
        'Open it to finish signing in.',
    });
  });

  const codePage = (req: FastifyRequest, reply: FastifyReply, extra: object = {}) =>
    page(reply, 'signin-code', req, { title: 'Two-factor code', ...extra });
  const expired = (req: FastifyRequest, reply: FastifyReply) =>
    signinPage(ctx, req, reply.code(410), {
      error: 'That sign-in was not finished in time, or was finished already. Sign in again.',
    });

  app.get('/signin/code', door, async (req, reply) => {
    if (!(await ctx.signInSteps.peek(req.cookies[CHALLENGE_COOKIE]))) return expired(req, reply);
    return codePage(req, reply);
  });

  app.post('/signin/code', door, async (req, reply) => {
    const id = req.cookies[CHALLENGE_COOKIE];
    const who = await ctx.signInSteps.peek(id);
    if (!who) return expired(req, reply);
    const code = (field(req.body, 'code') ?? '').slice(0, 64);
    const codeDoor = {
      kind: 'code' as const,
      ip: req.ip,
      email: who.email,
      personId: who.personId,
    };
    const taken = await ctx.studioAccounts.attempt(codeDoor);
    if (!taken.ok)
      return refused(req, reply, taken.retryAfterS, (r) =>
        codePage(req, r, {
          error: 'Too many wrong codes. Wait a quarter of an hour and try again.',
        }),
      );
    const answered = await ctx.signInSteps.answer(id, code);
    if (!answered.ok && answered.why === 'gone') return expired(req, reply);
    if (!answered.ok) {
      failed(req, who.email, 'code');
      return codePage(req, reply.code(401), {
        error: 'That code is wrong, or was used already. Try the next one from your app.',
      });
    }
    await ctx.studioAccounts.succeeded(codeDoor);
    reply.clearCookie(CHALLENGE_COOKIE, challengeCookie);
    return startSession(ctx, req, reply, answered, answered.via, answered.next);
  });

  // The mailed link: the page (GET spends nothing, so a mail scanner fetching it uses nothing)…
  const quiet = { ...door, logLevel: 'warn' as const };
  app.get<{ Params: { token: string } }>('/signin-link/:token', quiet, async (req, reply) =>
    page(reply, 'signin-link', req, {
      title: 'Sign in',
      action: `/signin-link/${req.params.token}`,
    }),
  );
  // …and its use, once.
  app.post<{ Params: { token: string } }>('/signin-link/:token', quiet, async (req, reply) => {
    const who = await ctx.signInSteps.useSignInLink(req.params.token);
    if (!who)
      return signinPage(ctx, req, reply.code(410), {
        error: 'That sign-in link was used already or has expired. Sign in again.',
      });
    return startSession(ctx, req, reply, who, 'link');
  });
}
