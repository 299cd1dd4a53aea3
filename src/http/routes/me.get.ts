import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../web/context.ts';

export function registerMe(app: FastifyInstance, ctx: Ctx) {
  app.get('/me', async (req) => {
    const key = req.apiKey;
    const [account, usage, createdBy, budgets] = await Promise.all([
      ctx.accounts.get(key.principal),
      ctx.accounts.dayUsage(key.principal, ctx.config.dayTimeZone),
      ctx.apiKeys.creatorOf(key.principal, key.id),
      ctx.budgets.ofKey(key.principal),
    ]);
    return {
      accountId: account.id,
      balanceCents: account.balanceCents,
      currency: 'EUR',
      key: {
        id: key.id,
        name: key.name,
        start: key.start,
        createdAt: key.createdAt.toISOString(),
        dailyCapCents: key.dailyCapCents,
        spentTodayCents: usage.spent,
        rateLimitPerMinute: key.rateLimitPerMinute,
        mode: key.mode,
        createdBy,
      },
      budgets,
    };
  });
}
