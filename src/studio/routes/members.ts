// The Members page (docs/studio.md "Members"): the account's members with their roles, pending
// invites, and what the reader's role may do to them (invite, change roles, remove, revoke an
// invite); any member may leave. The join page of an invite's link, and the account switcher of a
// person in several accounts. Every refusal is the services' (domain/authorize.ts): a crafted post
// gets the same 403 page as a missing button would mean.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { isId } from '../../domain/ids.ts';
import { can } from '../../domain/authorize.ts';
import { ROLES } from '../../domain/principal.ts';
import { signedIn, SESSION_COOKIE, sessionCookie, type StudioCtx } from '../types.ts';
import { page } from '../view.ts';
import { field, localPath } from '../form-body.ts';
import { MIN_PASSWORD, passwordProblem } from '../../services/passwords.ts';
import { doorBudget } from '../door-budget.ts';

const src = (req: FastifyRequest) => ({
  ip: req.ip,
  userAgent: req.headers['user-agent']?.slice(0, 500) ?? null,
});

export function registerMemberRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const pre = { preHandler: signedIn(ctx) };
  const membersPage = async (
    req: FastifyRequest,
    reply: FastifyReply,
    extra: Record<string, unknown> = {},
  ) => {
    const p = req.principal;
    const { members, invites } = await ctx.members.list(p);
    return page(reply, 'members', req, {
      title: 'Members',
      members,
      invites,
      roles: ROLES,
      me: req.studio!.personId,
      mayInvite: can(p, 'members.invite', { roles: [] }),
      // an admin's choices leave out owner (domain/authorize.ts `notOwner`)
      grantable: ROLES.filter((r) => can(p, 'members.role', { roles: [r] })),
      errors: {},
      values: {},
      ...extra,
    });
  };
  const userIdOf = (raw: string) => {
    if (!isId('usr', raw)) throw new ApiError('NOT_FOUND', 'There is no such member.');
    return raw;
  };

  app.get('/members', pre, async (req, reply) => membersPage(req, reply));

  app.post('/members/invite', pre, async (req, reply) => {
    const values = {
      email: (field(req.body, 'email') ?? '').trim(),
      role: field(req.body, 'role'),
    };
    try {
      const done = await ctx.members.invite(
        req.principal,
        { email: values.email, role: values.role },
        { src: src(req) },
      );
      // not mailed (no mail server, or it failed): the inviter passes the link on themselves
      const notice = done.mailed
        ? `Invited ${done.email} as ${done.role}. The link is on its way by mail.`
        : ctx.mailer
          ? `Invited ${done.email} as ${done.role}, but the mail could not be sent: ` +
            'send them the link below yourself.'
          : `Invited ${done.email} as ${done.role}. Send them the link.`;
      return membersPage(req, reply.code(201), {
        notice,
        mailFailed: !!ctx.mailer && !done.mailed,
        link: done.mailed ? null : done.link,
      });
    } catch (e) {
      const d = e instanceof ApiError && e.code === 'INVALID_INPUT' ? e.details?.[0] : undefined;
      const problem = d as { field?: string; message?: string } | undefined;
      if (!problem?.field) throw e;
      const errors = { [problem.field]: `The ${problem.field} ${problem.message}.` };
      return membersPage(req, reply.code(400), { errors, values });
    }
  });

  app.post('/members/invites/revoke', pre, async (req, reply) => {
    await ctx.members.revokeInvite(req.principal, field(req.body, 'email') ?? '', {
      src: src(req),
    });
    return reply.redirect('/members', 303);
  });

  app.post<{ Params: { id: string } }>('/members/:id/role', pre, async (req, reply) => {
    const id = userIdOf(req.params.id);
    await ctx.members.changeRole(req.principal, id, field(req.body, 'role'), { src: src(req) });
    return reply.redirect('/members', 303);
  });

  app.post<{ Params: { id: string } }>('/members/:id/remove', pre, async (req, reply) => {
    const id = userIdOf(req.params.id);
    const revokeKeys = field(req.body, 'revokeKeys') === 'on';
    await ctx.members.remove(req.principal, id, { revokeKeys }, { src: src(req) });
    // leaving ends this session too: the person signs in again to another account
    if (id === req.studio!.personId) return reply.redirect('/signin', 303);
    return reply.redirect('/members', 303);
  });

  app.post('/switch-account', pre, async (req, reply) => {
    const to = field(req.body, 'account') ?? '';
    const cookie = req.cookies[SESSION_COOKIE]!;
    if (!isId('acct', to) || !(await ctx.sessions.switchTo(cookie, req.studio!.personId!, to)))
      throw new ApiError('FORBIDDEN', 'You are not a member of that account.');
    return reply.redirect(localPath(field(req.body, 'next')), 303);
  });

  // An invite's link: GET shows it (a mail scanner fetching it uses nothing), POST joins.
  const door = { preValidation: doorBudget(ctx.config.studioDoorRequestsPerMinute, ctx.pace) };
  const quiet = { ...door, logLevel: 'warn' as const }; // the link is a secret: no access-log line
  const joinPage = async (
    req: FastifyRequest<{ Params: { token: string } }>,
    reply: FastifyReply,
    extra: Record<string, unknown> = {},
    status = 200,
  ) => {
    const invite = await ctx.studioAccounts.peekInvite(req.params.token);
    return page(reply.code(invite ? status : 410), 'join', req, {
      title: 'Join an account',
      invite,
      min: MIN_PASSWORD,
      action: `/join/${req.params.token}`,
      ...extra,
    });
  };
  app.get<{ Params: { token: string } }>('/join/:token', quiet, async (req, reply) =>
    joinPage(req, reply),
  );
  app.post<{ Params: { token: string } }>('/join/:token', quiet, async (req, reply) => {
    const password = field(req.body, 'password') ?? '';
    const invite = await ctx.studioAccounts.peekInvite(req.params.token);
    if (!invite) return joinPage(req, reply);
    if (!invite.known) {
      const problem = passwordProblem(password);
      if (problem) return joinPage(req, reply, { error: problem }, 400);
    }
    // a known person's password counts like a sign-in's
    const signin = { kind: 'signin' as const, ip: req.ip, email: invite.email };
    if (invite.known) {
      const taken = await ctx.studioAccounts.attempt(signin);
      if (!taken.ok)
        return joinPage(
          req,
          reply.header('retry-after', String(taken.retryAfterS)),
          { error: 'Too many sign-in attempts. Wait a quarter of an hour and try again.' },
          429,
        );
    }
    const joined = await ctx.studioAccounts.givenBackIfBusy(
      invite.known ? [signin] : [],
      ctx.studioAccounts.joinWithInvite(req.params.token, password, src(req)),
    );
    if (!joined.ok && joined.why === 'password')
      return joinPage(req, reply, { error: 'The password is wrong.' }, 401);
    if (!joined.ok) return joinPage(req, reply);
    if (invite.known) await ctx.studioAccounts.succeeded(signin);
    const id = await ctx.sessions.create(joined);
    reply.setCookie(SESSION_COOKIE, id, sessionCookie(ctx));
    return reply.redirect('/', 303);
  });
}
