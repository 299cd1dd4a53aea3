// Add credit (docs/billing.md): the owner picks an amount, we create a Stripe Checkout Session
// and send the browser there (303); Stripe sends it back to the success page, which shows the new
// balance as soon as Stripe's event has credited it. Only when Stripe is configured. An account
// makes at most 10 sessions an hour (services/checkout-sessions.ts): past that, this page says
// when to try again.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import type { Topups } from '../../services/topups.ts';
import { SESSION_COOKIE, signedIn, type StudioCtx } from '../types.ts';
import { page, SECURITY_HEADERS } from '../view.ts';
import { field } from '../form-body.ts';
import { autoRechargeData, registerAutoRechargeRoutes } from './auto-recharge.ts';

/** How long the success page waits for Stripe's event before saying it has not arrived yet. */
const SUCCESS_WAIT_SECONDS = 20;
const SESSION_ID = /^cs_[A-Za-z0-9_]{1,200}$/;

/**
 * The Add credit page's policy: browsers apply `form-action` to the redirect after a form's POST too,
 * so Checkout's origin (the session URL's, and nothing wider) is allowed there, on this page only.
 */
function checkoutPolicy(origin: string): string {
  return SECURITY_HEADERS['content-security-policy'].replace(
    "form-action 'self'",
    `form-action 'self' ${origin}`,
  );
}

export function registerCreditRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const topups = ctx.topups;
  if (!topups) return;
  const pre = { preHandler: signedIn(ctx) };
  const creditPage = (
    req: FastifyRequest,
    reply: FastifyReply,
    t: Topups,
    extra: Record<string, unknown> = {},
  ) =>
    autoRechargeData(req, t).then((auto) =>
      page(
        reply.header('content-security-policy', checkoutPolicy(t.checkoutOrigin)),
        'credit',
        req,
        { title: 'Add credit', amounts: t.amounts, ...auto, ...extra },
      ),
    );

  app.get<{ Querystring: { cancelled?: string; card?: string; saved?: string } }>(
    '/credit',
    pre,
    async (req, reply) =>
      creditPage(req, reply, topups, {
        cancelled: req.query.cancelled === '1',
        notice:
          req.query.card === 'saving'
            ? 'Card saved at Stripe: it shows here as soon as Stripe confirms it.'
            : req.query.card === 'removed'
              ? 'Card removed and detached at Stripe; auto-recharge is off.'
              : req.query.card === 'removed-later'
                ? 'Card removed; auto-recharge is off and it will not be charged. Stripe could ' +
                  'not be reached to detach it: that is retried in the background.'
                : req.query.saved === '1'
                  ? 'Auto-recharge settings saved.'
                  : null,
      }),
  );
  registerAutoRechargeRoutes(app, ctx, topups, (req, reply, extra) =>
    creditPage(req, reply, topups, extra),
  );

  app.post('/credit', pre, async (req, reply) => {
    const raw = (field(req.body, 'amount') ?? '').trim();
    const amount = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
    if (!topups.amounts.includes(amount)) {
      return creditPage(req, reply.code(400), topups, {
        error: 'Choose one of the amounts below.',
      });
    }
    let url: string;
    try {
      url = await topups.startCheckout(req.principal, amount);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      // Past the sessions an hour (429): the page says when to try again, and so does Retry-After.
      if (e.headers) reply.headers(e.headers);
      return creditPage(req, reply.code(e.status), topups, { error: e.message });
    }
    return reply.redirect(url, 303);
  });

  app.get<{ Querystring: { session_id?: string } }>('/credit/success', pre, async (req, reply) => {
    const sessionId =
      typeof req.query.session_id === 'string' && SESSION_ID.test(req.query.session_id)
        ? req.query.session_id
        : null;
    if (!sessionId) throw new ApiError('NOT_FOUND', 'This payment is unknown.');
    const closed = new AbortController();
    reply.raw.once('close', () => closed.abort());
    const topup = await topups.waitCredited(
      req.principal,
      sessionId,
      SUCCESS_WAIT_SECONDS,
      closed.signal,
    );
    // The balance shown (here and in the header) is the one after the wait.
    const fresh = await ctx.sessions.find(req.cookies[SESSION_COOKIE], 'account', { fresh: true });
    if (fresh) req.studio = fresh;
    return page(reply, 'credit-success', req, {
      title: topup ? 'Credit added' : 'Payment received',
      topup,
    });
  });
}
