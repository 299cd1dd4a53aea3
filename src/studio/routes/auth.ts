// Accounts in the studio: sign up, sign out (this session or all), change password, and the
// one-time links (invite, reset; by mail where SMTP is set). Signing in is routes/sign-in.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  signedIn,
  accountOf,
  personOf,
  SESSION_COOKIE,
  sessionCookie,
  type StudioCtx,
} from '../types.ts';
import { page } from '../view.ts';
import { zeroHelp } from '../zero-help.ts';
import { field } from '../form-body.ts';
import crypto from 'node:crypto';
import { EMAIL, MIN_PASSWORD, passwordProblem } from '../../services/passwords.ts';
import type { Purpose } from '../../services/one-time-links.ts';
import { doorRefusalPause } from '../../admission/door-budget.ts';
import { doorBudget } from '../door-budget.ts';
import { sourceOf } from '../../web/audit-source.ts';
import { startSession as openSession } from '../sign-in-pages.ts';
import { accountPage } from './two-factor.ts';

export function registerAuthRoutes(app: FastifyInstance, ctx: StudioCtx) {
  // Every door below shares one budget per address.
  const door = { preValidation: doorBudget(ctx.config.studioDoorRequestsPerMinute, ctx.pace) };
  const startSession = (
    req: FastifyRequest,
    reply: FastifyReply,
    who: { personId: string; accountId: string | null },
    via: string,
    next = '/',
  ) => openSession(ctx, req, reply, who, via, next);

  // A wrong password for a known email is audited; not awaited, so that the answer's time does not
  // tell a known email from an unknown one.
  const failed = (req: FastifyRequest, email: string) =>
    void ctx.studioAccounts
      .signInFailed(email, sourceOf(req))
      .catch((e: unknown) => req.log.warn({ err: e }, 'failed sign-in not audited'));

  app.get('/', { preHandler: signedIn(ctx) }, async (req, reply) =>
    page(reply, 'catalog', req, {
      title: 'Models',
      models: ctx.catalog.models,
      cards: ctx.cards,
      zero: zeroHelp(ctx),
    }),
  );

  app.get('/signup', door, async (req, reply) => {
    if (!ctx.config.signupOpen)
      return page(reply.code(404), 'error', req, {
        title: 'Sign-up is closed',
        message: 'Accounts are created by the operator here; ask them for an invitation.',
      });
    return page(reply, 'signup', req, { title: 'Create an account', min: MIN_PASSWORD });
  });

  app.post('/signup', door, async (req, reply) => {
    if (!ctx.config.signupOpen)
      return page(reply.code(404), 'error', req, {
        title: 'Sign-up is closed',
        message: 'Accounts are created by the operator here; ask them for an invitation.',
      });
    const email = (field(req.body, 'email') ?? '').trim();
    const password = field(req.body, 'password') ?? '';
    const again = (error: string) =>
      page(reply.code(400), 'signup', req, {
        title: 'Create an account',
        min: MIN_PASSWORD,
        email,
        error,
      });
    if (!EMAIL.test(email) || email.length > 254) return again('Enter a valid email address.');
    const problem = passwordProblem(password);
    if (problem) return again(problem);
    const addressDoor = { kind: 'signup' as const, ip: req.ip, perHour: ctx.config.signupsPerHour };
    const perAddress = await ctx.studioAccounts.attempt(addressDoor);
    if (!perAddress.ok) {
      await doorRefusalPause(ctx.pace, req.ip);
      return page(
        reply.code(429).header('retry-after', String(perAddress.retryAfterS)),
        'signup',
        req,
        {
          title: 'Create an account',
          min: MIN_PASSWORD,
          email,
          error: 'Too many accounts were created from this address. Try again in an hour.',
        },
      );
    }
    // A sign-up with an email that has an account is a sign-in from the outside: counted like one, and
    // answered like a new account (303 to the studio with a session cookie) whatever the email.
    const door = { kind: 'signin' as const, ip: req.ip, email };
    const taken = await ctx.studioAccounts.attempt(door);
    if (!taken.ok) {
      await doorRefusalPause(ctx.pace, req.ip);
      return page(reply.code(429).header('retry-after', String(taken.retryAfterS)), 'signup', req, {
        title: 'Create an account',
        min: MIN_PASSWORD,
        email,
        error: 'Too many attempts with this email. Wait a quarter of an hour and try again.',
      });
    }
    // a password hash or check the process was too busy to run gives both counts back with its 503
    const counted = [addressDoor, door];
    const created = await ctx.studioAccounts.givenBackIfBusy(
      counted,
      ctx.studioAccounts.signUp(email, password),
    );
    if (created) {
      // the same work as for a taken email: the time tells nothing
      await ctx.studioAccounts.spendVerification(password);
      await ctx.studioAccounts.succeeded(door);
      return startSession(req, reply, created, 'signup');
    }
    const owner = await ctx.studioAccounts.givenBackIfBusy(
      counted,
      ctx.studioAccounts.checkPassword(email, password),
    );
    if (owner) {
      await ctx.studioAccounts.succeeded(door);
      return startSession(req, reply, owner, 'password');
    }
    // A wrong password for a taken email: no session (the cookie opens nothing; the studio then asks
    // to sign in), and the owner hears of it where mail is set up.
    failed(req, email);
    reply.setCookie(
      SESSION_COOKIE,
      crypto.randomBytes(32).toString('base64url'),
      sessionCookie(ctx),
    );
    // Not awaited: the mail server's time must not tell this answer from a new account's.
    void ctx.mailer
      ?.send(
        email,
        'Someone tried to create a Rendergate account with your email',
        `Someone tried to create a Rendergate account with this email, which already has one.\n\nIf it was you, sign in at ${ctx.config.publicUrl}/signin, or reset your password there.\n`,
      )
      .catch((e) => req.log.warn({ err: e }, 'sign-up notice not sent'));
    return reply.redirect('/', 303);
  });

  app.post('/signout', async (req, reply) => {
    const id = req.cookies[SESSION_COOKIE];
    if (id) await ctx.sessions.revoke(id);
    reply.clearCookie(SESSION_COOKIE, sessionCookie(ctx));
    return reply.redirect('/signin', 303);
  });

  app.post('/signout-everywhere', { preHandler: signedIn(ctx) }, async (req, reply) => {
    await ctx.sessions.revokeAll(personOf(req));
    reply.clearCookie(SESSION_COOKIE, sessionCookie(ctx));
    return reply.redirect('/signin', 303);
  });

  app.get('/account', { preHandler: signedIn(ctx) }, async (req, reply) =>
    accountPage(ctx, req, reply),
  );

  app.post('/account/password', { preHandler: signedIn(ctx) }, async (req, reply) => {
    const again = (error: string) => accountPage(ctx, req, reply.code(400), { error });
    if (
      !(await ctx.studioAccounts.currentPasswordOk(personOf(req), field(req.body, 'current') ?? ''))
    )
      return again('The current password is wrong.');
    const password = field(req.body, 'password') ?? '';
    const problem = passwordProblem(password);
    if (problem) return again(problem);
    await ctx.studioAccounts.setPassword(personOf(req), password, sourceOf(req)); // voids links
    // Every other session ends; this one is replaced by a new one.
    await ctx.sessions.revokeAll(personOf(req));
    const id = await ctx.sessions.create({ personId: personOf(req), accountId: accountOf(req) });
    reply.setCookie(SESSION_COOKIE, id, sessionCookie(ctx));
    return accountPage(ctx, req, reply, {
      notice: 'Your password has been changed. Other sessions were signed out.',
    });
  });

  // One-time links: the form (GET does not use the link, so a mail scanner fetching it spends nothing)…
  for (const purpose of ['invite', 'reset'] as Exclude<Purpose, 'signin'>[]) {
    const title = purpose === 'invite' ? 'Set your password' : 'Choose a new password';
    // The link is a secret: no access-log line carries it (info lines are off for these routes).
    const quiet = { ...door, logLevel: 'warn' as const };
    app.get<{ Params: { token: string } }>(`/${purpose}/:token`, quiet, async (req, reply) => {
      const live = await ctx.studioAccounts.peekLink(req.params.token, purpose);
      const accountId = live?.accountId ?? null;
      const email = live?.email ?? null;
      return page(reply.code(accountId ? 200 : 410), 'set-password', req, {
        title,
        valid: !!accountId,
        email,
        min: MIN_PASSWORD,
        action: `/${purpose}/${req.params.token}`,
      });
    });
    // …and its use: the password set and the link spent in one transaction, all other sessions ended.
    app.post<{ Params: { token: string } }>(`/${purpose}/:token`, quiet, async (req, reply) => {
      const password = field(req.body, 'password') ?? '';
      const problem = passwordProblem(password);
      if (problem) {
        return page(reply.code(400), 'set-password', req, {
          title,
          valid: true,
          email: '',
          min: MIN_PASSWORD,
          action: `/${purpose}/${req.params.token}`,
          error: problem,
        });
      }
      // Sets the password, spends the link, ends every session and voids every other link, in one go.
      const owner = await ctx.studioAccounts.setPasswordWithLink(
        req.params.token,
        purpose,
        password,
        sourceOf(req),
      );
      if (!owner)
        return page(reply.code(410), 'set-password', req, {
          title,
          valid: false,
          min: MIN_PASSWORD,
          action: '',
        });
      return startSession(req, reply, owner, purpose);
    });
  }

  app.get('/forgot', door, async (req, reply) => {
    if (!ctx.mailer)
      return page(reply.code(404), 'error', req, {
        title: 'Not available',
        message: 'Ask the operator for a password reset link.',
      });
    return page(reply, 'forgot', req, { title: 'Reset your password' });
  });

  app.post('/forgot', door, async (req, reply) => {
    if (!ctx.mailer)
      return page(reply.code(404), 'error', req, {
        title: 'Not available',
        message: 'Ask the operator for a password reset link.',
      });
    const email = (field(req.body, 'email') ?? '').trim().slice(0, 254);
    // The same answer whether or not the email has an account, and the throttle counts every request.
    if ((await ctx.studioAccounts.attempt({ kind: 'reset', ip: req.ip, email })).ok) {
      const reset = await ctx.studioAccounts.resetLinkFor(email);
      if (reset) {
        await ctx.mailer
          .send(
            reset.email,
            'Reset your Rendergate password',
            `Someone asked to reset the password of this Rendergate account.\n\nSet a new password (the link works once, within an hour):\n${reset.link}\n\nIf it was not you, ignore this message.\n`,
          )
          .catch((e) => req.log.warn({ err: e }, 'reset mail not sent'));
      }
    }
    return page(reply, 'forgot', req, { title: 'Reset your password', sent: true });
  });
}
