// The Account page's two-factor part (docs/studio.md "Two-factor"): Turn on two-factor (a secret
// as a QR code and as text, confirmed by a first Code, then ten recovery codes shown once), Turn
// off (with a code), and an owner's Require two-factor for the account.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accountOf, personOf, signedIn, type StudioCtx } from '../types.ts';
import { page } from '../view.ts';
import { field } from '../form-body.ts';
import { sourceOf } from '../../web/audit-source.ts';
import { MIN_PASSWORD } from '../../services/passwords.ts';
import { can } from '../../domain/authorize.ts';

/** The Account page, with its two-factor part as it stands and `extra` (a notice, an error…). */
export async function accountPage(
  ctx: StudioCtx,
  req: FastifyRequest,
  reply: FastifyReply,
  extra: Record<string, unknown> = {},
) {
  const factor = await ctx.secondFactor.status(personOf(req), accountOf(req));
  return page(reply, 'account', req, {
    title: 'Account',
    min: MIN_PASSWORD,
    factor,
    mayRequire: can(req.principal, 'account.requireTwoFactor'),
    ...extra,
  });
}

export function registerTwoFactorRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const pre = { preHandler: signedIn(ctx) };
  const code = (req: FastifyRequest) => (field(req.body, 'code') ?? '').slice(0, 64);

  app.post('/account/two-factor/start', pre, async (req, reply) =>
    accountPage(ctx, req, reply, { enrol: await ctx.secondFactor.start(personOf(req)) }),
  );

  app.post('/account/two-factor/confirm', pre, async (req, reply) => {
    const codes = await ctx.secondFactor.confirm(personOf(req), code(req), sourceOf(req));
    if (codes)
      return accountPage(ctx, req, reply, {
        recoveryCodes: codes,
        notice: 'Two-factor is on. Keep these recovery codes somewhere safe: each works once.',
      });
    const enrol = await ctx.secondFactor.pending(personOf(req));
    return accountPage(ctx, req, reply.code(400), {
      enrol,
      factorError: enrol
        ? 'That code is wrong. Enter the 6-digit code your app shows now.'
        : 'Two-factor is already on, or was not being turned on. Start again.',
    });
  });

  app.post('/account/two-factor/disable', pre, async (req, reply) => {
    if (!(await ctx.secondFactor.disable(personOf(req), code(req), sourceOf(req))))
      return accountPage(ctx, req, reply.code(400), {
        factorError: 'That code is wrong or was used already: two-factor stays on.',
      });
    return accountPage(ctx, req, reply, { notice: 'Two-factor is off.' });
  });

  app.post('/account/two-factor/require', pre, async (req, reply) => {
    const required = field(req.body, 'required') === 'true';
    await ctx.secondFactor.require(req.principal, accountOf(req), required, sourceOf(req));
    return accountPage(ctx, req, reply, {
      notice: required
        ? 'Two-factor is now required: members without it are sent to turn it on.'
        : 'Two-factor is no longer required in this account.',
    });
  });
}
