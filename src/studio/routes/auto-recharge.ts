// Auto-recharge on the Add credit page (docs/billing.md "Auto-recharge"): Save a card (a Stripe
// Checkout Session in setup mode: the browser goes to Stripe and comes back), Remove card, and the
// plan: Recharge below (€), Recharge amount (one of the amounts offered), on or off. Each refusal
// is the page again with a 400 and its reason, nothing written (services/auto-recharge.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { refusal } from '../../domain/authorize.ts';
import type { Topups } from '../../services/topups.ts';
import { signedIn, type StudioCtx } from '../types.ts';
import { field } from '../form-body.ts';

/** Euros as a person types them (`5`, `5.5`, `5,50`) → cents; NaN when it is not that. */
export function euroCents(raw: string | undefined): number {
  const m = /^(\d{1,7})(?:[.,](\d{1,2}))?$/.exec((raw ?? '').trim());
  return m ? Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0')) : NaN;
}

/** What the Add credit page shows of auto-recharge, for the principal's role. */
export async function autoRechargeData(req: FastifyRequest, t: Topups) {
  return {
    auto: await t.autoRecharge.view(req.principal),
    canManage: refusal(req.principal, 'autoRecharge.manage') === null,
  };
}

type CreditPage = (
  req: FastifyRequest,
  reply: FastifyReply,
  extra: Record<string, unknown>,
) => Promise<unknown>;

export function registerAutoRechargeRoutes(
  app: FastifyInstance,
  ctx: StudioCtx,
  t: Topups,
  creditPage: CreditPage,
) {
  const pre = { preHandler: signedIn(ctx) };
  const refused = (req: FastifyRequest, reply: FastifyReply, e: unknown) => {
    if (!(e instanceof ApiError)) throw e;
    if (e.headers) reply.headers(e.headers);
    return creditPage(req, reply.code(e.status), { autoError: e.message });
  };

  app.post('/credit/card', pre, async (req, reply) => {
    try {
      return reply.redirect(await t.autoRecharge.startSetup(req.principal), 303);
    } catch (e) {
      return refused(req, reply, e);
    }
  });

  app.post('/credit/card/remove', pre, async (req, reply) => {
    let detached: boolean;
    try {
      ({ detached } = await t.autoRecharge.removeCard(req.principal, {
        ip: req.ip,
        userAgent: null,
      }));
    } catch (e) {
      return refused(req, reply, e);
    }
    return reply.redirect(`/credit?card=${detached ? 'removed' : 'removed-later'}`, 303);
  });

  app.post('/credit/auto-recharge', pre, async (req, reply) => {
    const belowCents = euroCents(field(req.body, 'below'));
    const amountCents = Number(field(req.body, 'amount') ?? NaN);
    const enabled = field(req.body, 'enabled') === 'on';
    if (Number.isNaN(belowCents))
      return refused(
        req,
        reply,
        new ApiError('INVALID_INPUT', 'Recharge below: an amount in euros, like 5 or 5.50.'),
      );
    try {
      await t.autoRecharge.savePlan(
        req.principal,
        { belowCents, amountCents, enabled },
        { ip: req.ip, userAgent: null },
      );
    } catch (e) {
      return refused(req, reply, e);
    }
    return reply.redirect('/credit?saved=1', 303);
  });
}
