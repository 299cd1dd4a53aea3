// The operator's budgets and alert (docs/api.md "Budgets", "Alerts"): an account's, a member's and
// a key's budget per period (PUT sets `{ limitCents }`, DELETE removes, GET lists), and the
// account's low-balance alert (PATCH /accounts/{id} `{ lowBalanceCents }`). A period that does not
// exist is 400, as is a limit outside 0..MAX_CENTS; nothing is written then.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { isId } from '../../domain/ids.ts';
import { objectBody } from '../../domain/body.ts';
import { PERIODS, type Period, type Whose } from '../../services/budgets.ts';
import type { Ctx } from '../../web/context.ts';
import { sourceOf } from '../../web/audit-source.ts';
import { Fields, MAX_CENTS } from './fields.ts';

type P = { id: string; userId?: string; period?: string };

const accountOf = (raw: string) => {
  if (!isId('acct', raw)) throw new ApiError('ACCOUNT_NOT_FOUND', 'No such account.');
  return raw;
};

const periodOf = (raw: string | undefined): Period => {
  if (!(PERIODS as readonly string[]).includes(raw ?? ''))
    throw new ApiError('INVALID_INPUT', `No budget period "${raw}".`, [
      { field: 'period', message: `must be one of ${PERIODS.join(', ')}` },
    ]);
  return raw as Period;
};

/** The three owners of budgets, as their paths name them. */
const SUBJECTS: { path: string; whose: (p: P) => Whose }[] = [
  { path: '/accounts/:id', whose: (p) => ({ scope: 'account', account: accountOf(p.id) }) },
  {
    path: '/accounts/:id/members/:userId',
    whose: (p) => {
      const account = accountOf(p.id);
      if (!isId('usr', p.userId!))
        throw new ApiError('NOT_FOUND', `No member ${p.userId} in this account.`);
      return { scope: 'member', account, personId: p.userId! };
    },
  },
  {
    path: '/keys/:id',
    whose: (p) => {
      if (!isId('key', p.id)) throw new ApiError('KEY_NOT_FOUND', 'No such key.');
      return { scope: 'key', keyId: p.id };
    },
  },
];

export function registerAdminBudgets(app: FastifyInstance, ctx: Ctx) {
  for (const s of SUBJECTS) {
    app.get<{ Params: P }>(`${s.path}/budgets`, async (req) => ({
      data: await ctx.budgets.list(req.principal, s.whose(req.params)),
    }));
    app.put<{ Params: P }>(`${s.path}/budgets/:period`, async (req) => {
      const whose = s.whose(req.params);
      const period = periodOf(req.params.period);
      const f = new Fields(objectBody(req.body), ['limitCents']);
      const limit = f.int('limitCents', { required: true, min: 0, max: MAX_CENTS });
      f.done();
      const data = await ctx.budgets.set(req.principal, whose, period, limit!, sourceOf(req));
      return { data };
    });
    app.delete<{ Params: P }>(`${s.path}/budgets/:period`, async (req) => {
      const whose = s.whose(req.params);
      const data = await ctx.budgets.remove(
        req.principal,
        whose,
        periodOf(req.params.period),
        sourceOf(req),
      );
      return { data };
    });
  }

  app.patch<{ Params: { id: string } }>('/accounts/:id', async (req: FastifyRequest) => {
    const account = accountOf((req.params as { id: string }).id);
    const f = new Fields(objectBody(req.body), ['lowBalanceCents']);
    const low = f.int('lowBalanceCents', {
      required: true,
      min: 0,
      max: MAX_CENTS,
      nullable: true,
    });
    f.done();
    await ctx.budgets.setLowBalance(req.principal, low ?? null, { account, src: sourceOf(req) });
    return ctx.accounts.get(req.principal, account);
  });
}
