// The Budgets part of the Usage page (docs/studio.md "Usage"): every budget of the account as spent
// of its limit, a form to set one (the account's, a member's or a key's, per period) and to remove
// one, and the low-balance alert, each offered only to the roles that may change it
// (domain/authorize.ts). A bad amount or period is a 400 page saying so; a role that may not, 403.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { can } from '../../domain/authorize.ts';
import { ApiError } from '../../domain/errors.ts';
import type { Principal } from '../../domain/principal.ts';
import { PERIODS, type BudgetsPanel, type Period, type Whose } from '../../services/budgets.ts';
import { sourceOf } from '../../web/audit-source.ts';
import { field } from '../form-body.ts';
import { signedIn, type StudioCtx } from '../types.ts';
import { parseEuros } from './keys.ts';

/** A subject the form offers: `value` as the form sends it, and whether the reader may change it. */
interface Option {
  value: string;
  label: string;
  may: boolean;
}

/**
 * What the partial (views/usage-budgets.eta) shows of the panel's read (services/usage.ts statement,
 * or services/budgets.ts panel): given to the Usage page as `budgets`.
 */
export function budgetsPanel(p: Principal, panel: BudgetsPanel) {
  const { budgets: rows, keys: live, members, lowBalanceCents } = panel;
  const options: Option[] = [
    { value: 'account', label: 'The account', may: can(p, 'budgets.account') },
    ...members.map((m) => ({
      value: `member:${m.personId}`,
      label: `Member ${m.email}`,
      may: can(p, 'budgets.member'),
    })),
    ...live.map((k) => ({
      value: `key:${k.id}`,
      label: `Key ${k.name ?? k.start}`,
      may: can(p, 'budgets.key', { createdBy: k.createdBy }),
    })),
  ];
  const byValue = new Map(options.map((o) => [o.value, o]));
  const valueOf = (scope: string, id: string) =>
    scope === 'account' ? 'account' : `${scope}:${id}`;
  return {
    rows: rows.map((b) => {
      const o = byValue.get(valueOf(b.scope, b.subjectId));
      return {
        ...b,
        value: valueOf(b.scope, b.subjectId),
        label: o?.label ?? b.subjectId,
        may: !!o?.may,
      };
    }),
    options: options.filter((o) => o.may),
    periods: PERIODS,
    lowBalanceCents,
    mayLowBalance: can(p, 'lowBalanceAlert.manage'),
  };
}

/** The subject a form names ("account", "member:usr_…", "key:key_…"), else 400. */
function whoseOf(raw: string | undefined): Whose {
  const [scope, id] = (raw ?? '').split(':', 2);
  if (scope === 'account' && id === undefined) return { scope: 'account' };
  if (scope === 'member' && id) return { scope: 'member', personId: id };
  if (scope === 'key' && id) return { scope: 'key', keyId: id };
  throw new ApiError('INVALID_INPUT', 'Choose whose budget it is from the list.');
}

function periodOf(raw: string | undefined): Period {
  if (!(PERIODS as readonly string[]).includes(raw ?? ''))
    throw new ApiError('INVALID_INPUT', `Choose a period: ${PERIODS.join(', ')}.`);
  return raw as Period;
}

export function registerBudgetRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const pre = { preHandler: signedIn(ctx) };
  const back = '/usage#budgets-h';
  const keyAccount = (req: FastifyRequest, w: Whose): Whose =>
    w.scope === 'key'
      ? { ...w, account: req.principal.kind === 'member' ? req.principal.account : undefined }
      : w;

  app.post('/usage/budgets', pre, async (req, reply) => {
    const whose = keyAccount(req, whoseOf(field(req.body, 'whose')));
    const period = periodOf(field(req.body, 'period'));
    const cents = parseEuros(field(req.body, 'limit') ?? '');
    if (cents === undefined || cents === null)
      throw new ApiError('INVALID_INPUT', 'Write the limit in euros, such as 50 or 12.50.');
    await ctx.budgets.set(req.principal, whose, period, cents, sourceOf(req));
    return reply.redirect(back, 303);
  });

  app.post('/usage/budgets/remove', pre, async (req, reply) => {
    const whose = keyAccount(req, whoseOf(field(req.body, 'whose')));
    await ctx.budgets.remove(
      req.principal,
      whose,
      periodOf(field(req.body, 'period')),
      sourceOf(req),
    );
    return reply.redirect(back, 303);
  });

  app.post('/usage/low-balance', pre, async (req, reply) => {
    const cents = parseEuros(field(req.body, 'lowBalance') ?? '');
    if (cents === undefined)
      throw new ApiError(
        'INVALID_INPUT',
        'Write the alert in euros, such as 10 or 2.50, or leave it empty for none.',
      );
    await ctx.budgets.setLowBalance(req.principal, cents, { src: sourceOf(req) });
    return reply.redirect(back, 303);
  });
}
