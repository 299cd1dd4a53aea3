// The operator's console at /admin: signed in with the admin token (its own session and cookie, scoped to
// /admin), it offers the admin API's operations and nothing more: find accounts, create one with an
// invitation, credit, create and revoke keys, refund a succeeded generation, read the ledger, print a
// password reset link.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { isId } from '../../domain/ids.ts';
import { ADMIN_COOKIE, sessionCookie, type StudioCtx } from '../types.ts';
import { page } from '../view.ts';
import { field } from '../form-body.ts';
import { parseEuros } from './keys.ts';
import { doorRefusalPause } from '../../admission/door-budget.ts';
import { ledgerLabel } from '../../services/billing.ts';
import { sourceOf } from '../../web/audit-source.ts';

type IdParams = { Params: { id: string } };
const sha = (s: string) => crypto.createHash('sha256').update(s).digest();

export function registerAdminConsole(app: FastifyInstance, ctx: StudioCtx) {
  const expected = sha(ctx.adminToken);
  const cookie = sessionCookie(ctx, '/admin');
  // A console session's principal is the operator (services/sessions.ts), for the services.
  const signedIn = async (req: FastifyRequest) => {
    const s = await ctx.sessions.find(req.cookies[ADMIN_COOKIE], 'admin');
    if (s) req.principal = s.principal;
    return s !== null;
  };
  const pre = {
    preHandler: async (req: FastifyRequest, reply: FastifyReply) => {
      if (!(await signedIn(req))) return reply.redirect('/admin', 303);
    },
  };
  const adminPage = (
    req: FastifyRequest,
    reply: FastifyReply,
    template: string,
    data: Record<string, unknown> & { title: string },
  ) => page(reply, template, req, { admin: true, ...data }, 'admin-layout');
  const accountId = (raw: string) => {
    if (!isId('acct', raw)) throw new ApiError('ACCOUNT_NOT_FOUND', 'No such account.');
    return raw;
  };

  app.get<{ Querystring: { q?: string } }>('/admin', async (req, reply) => {
    if (!(await signedIn(req)))
      return adminPage(req, reply, 'admin-signin', { title: 'Operator sign-in' });
    const q = typeof req.query.q === 'string' ? req.query.q.trim().slice(0, 200) : '';
    return adminPage(req, reply, 'admin-accounts', {
      title: 'Accounts',
      q,
      accounts: await ctx.studioAccounts.search(req.principal, q),
      owing: await ctx.billing.shortfalls(req.principal),
    });
  });

  // Stripe's events as received (docs/billing.md), with what each did.
  app.get('/admin/stripe', pre, async (req, reply) => {
    return adminPage(req, reply, 'admin-stripe', {
      title: 'Stripe events',
      events: await ctx.billing.stripeEvents(req.principal, { limit: 200 }),
    });
  });

  app.post('/admin/signin', async (req, reply) => {
    const token = field(req.body, 'token') ?? '';
    // Throttled per address only: wrong tokens from one address never lock the operator out elsewhere.
    const door = { kind: 'console' as const, ip: req.ip };
    const taken = await ctx.studioAccounts.attempt(door);
    if (!taken.ok) {
      await doorRefusalPause(ctx.pace, req.ip);
      return adminPage(
        req,
        reply.code(429).header('retry-after', String(taken.retryAfterS)),
        'admin-signin',
        {
          title: 'Operator sign-in',
          error: 'Too many wrong tokens from this address. Wait a quarter of an hour.',
        },
      );
    }
    if (!crypto.timingSafeEqual(sha(token), expected) || ctx.adminToken === '') {
      return adminPage(req, reply.code(401), 'admin-signin', {
        title: 'Operator sign-in',
        error: 'That is not the admin token.',
      });
    }
    await ctx.studioAccounts.succeeded(door);
    reply.setCookie(ADMIN_COOKIE, await ctx.sessions.create(null), cookie);
    return reply.redirect('/admin', 303);
  });

  app.post('/admin/signout', async (req, reply) => {
    const id = req.cookies[ADMIN_COOKIE];
    if (id) await ctx.sessions.revoke(id);
    reply.clearCookie(ADMIN_COOKIE, cookie);
    return reply.redirect('/admin', 303);
  });

  app.post('/admin/accounts', pre, async (req, reply) => {
    const link = await ctx.studioAccounts.invite(
      req.principal,
      (field(req.body, 'email') ?? '').trim(),
      (field(req.body, 'name') ?? '').trim() || null,
    );
    return accountPage(req as FastifyRequest<IdParams>, reply, link.accountId, { link });
  });

  const accountPage = async (
    req: FastifyRequest<IdParams>,
    reply: FastifyReply,
    id: string,
    extra: Record<string, unknown> = {},
  ) => {
    const p = req.principal;
    const account = await ctx.accounts.get(p, accountId(id));
    const cursor =
      typeof (req.query as { cursor?: unknown })?.cursor === 'string'
        ? (req.query as { cursor: string }).cursor
        : null;
    const [keys, ledger, gens, stripe] = await Promise.all([
      ctx.apiKeys.list(p, ctx.config.dayTimeZone, id),
      ctx.accounts.ledger(p, 25, cursor, id),
      ctx.generations.list(p, { limit: 20, cursor: null, status: null, modelId: null }, id),
      ctx.billing.stripeEvents(p, { limit: 20, accountId: id }),
    ]);
    return adminPage(req, reply, 'admin-account', {
      title: account.email,
      account,
      keys,
      ledger: ledger.data,
      nextCursor: ledger.nextCursor,
      generations: gens.data,
      stripe,
      ledgerLabel,
      ...extra,
    });
  };

  app.get<IdParams>('/admin/accounts/:id', pre, async (req, reply) =>
    accountPage(req, reply, req.params.id),
  );

  app.post<IdParams>('/admin/accounts/:id/credits', pre, async (req, reply) => {
    const cents = parseEuros(field(req.body, 'amount') ?? '');
    if (!cents)
      throw new ApiError('INVALID_INPUT', 'Write a positive amount in euros, such as 10 or 12.50.');
    await ctx.accounts.credit(
      req.principal,
      accountId(req.params.id),
      cents,
      (field(req.body, 'reason') ?? '').trim().slice(0, 500) || null,
      sourceOf(req),
    );
    return reply.redirect(`/admin/accounts/${req.params.id}`, 303);
  });

  app.post<IdParams>('/admin/accounts/:id/keys', pre, async (req, reply) => {
    const cap = parseEuros(field(req.body, 'dailyCap') ?? '');
    if (cap === undefined)
      throw new ApiError('INVALID_INPUT', 'Daily cap: an amount in euros, or empty for none.');
    const rateRaw = (field(req.body, 'rateLimit') ?? '').trim();
    const rate = rateRaw === '' ? undefined : Number(rateRaw);
    if (rate !== undefined && !(Number.isInteger(rate) && rate >= 1 && rate <= 1_000_000))
      throw new ApiError('INVALID_INPUT', 'Rate limit: a whole number from 1 to 1000000.');
    const mode = field(req.body, 'mode') ?? 'live';
    if (mode !== 'live' && mode !== 'test')
      throw new ApiError('INVALID_INPUT', 'Mode: Live or Test.');
    const created = await ctx.apiKeys.create(
      req.principal,
      accountId(req.params.id),
      {
        name: (field(req.body, 'name') ?? '').trim().slice(0, 200) || undefined,
        dailyCapCents: cap,
        rateLimitPerMinute: rate,
        mode,
      },
      sourceOf(req),
    );
    return accountPage(req, reply.code(201), req.params.id, { createdKey: created });
  });

  app.post<IdParams>('/admin/keys/:id/revoke', pre, async (req, reply) => {
    if (!isId('key', req.params.id)) throw new ApiError('KEY_NOT_FOUND', 'No such key.');
    await ctx.apiKeys.revoke(req.principal, req.params.id, sourceOf(req));
    const account = await ctx.apiKeys.accountOf(req.principal, req.params.id);
    return reply.redirect(`/admin/accounts/${account!}`, 303);
  });

  app.post<IdParams>('/admin/accounts/:id/reset-link', pre, async (req, reply) => {
    const account = await ctx.accounts.get(req.principal, accountId(req.params.id));
    return accountPage(req, reply, req.params.id, {
      link: await ctx.studioAccounts.resetLink(req.principal, account.email),
    });
  });

  app.post('/admin/refund', pre, async (req, reply) => {
    const id = (field(req.body, 'generation') ?? '').trim();
    if (!isId('gen', id)) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    await ctx.generations.adminRefund(req.principal, id);
    const account = await ctx.generations.accountOf(req.principal, id);
    return reply.redirect(`/admin/accounts/${account!}`, 303);
  });
}
