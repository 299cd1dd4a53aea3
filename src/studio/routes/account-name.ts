// The Account page's name form (docs/studio.md "Account"): an owner renames the account. Other roles
// see the name without the form; a crafted post gets the services' 403 page like any other refusal.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { signedIn, type StudioCtx } from '../types.ts';
import { accountPage } from './two-factor.ts';
import { field } from '../form-body.ts';
import { sourceOf } from '../../web/audit-source.ts';

export function registerAccountNameRoutes(app: FastifyInstance, ctx: StudioCtx) {
  app.post('/account/name', { preHandler: signedIn(ctx) }, async (req, reply) => {
    const value = field(req.body, 'name') ?? '';
    let name: string | null;
    try {
      name = await ctx.accounts.rename(req.principal, value, sourceOf(req));
    } catch (e) {
      const problem = e instanceof ApiError && e.code === 'INVALID_INPUT' ? e.details?.[0] : null;
      if (!problem) throw e;
      const { message } = problem as { message: string };
      return accountPage(ctx, req, reply.code(400), {
        nameError: `The name may have ${message}.`,
        nameValue: value,
      });
    }
    // the session was read before the rename: the page shows the name it now has
    req.studio!.accountName = name;
    return accountPage(ctx, req, reply, {
      nameNotice: name === null ? 'The account has no name now.' : `The account is now ${name}.`,
    });
  });
}
