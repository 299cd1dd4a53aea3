import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../context.ts';
import { getAccount } from '../../services/accounts.ts';
import { spentToday } from '../../services/day-usage.ts';

export function registerMe(app: FastifyInstance, ctx: Ctx) {
  app.get('/me', async (req) => {
    const key = req.apiKey;
    const [account, spent] = await Promise.all([
      getAccount(ctx.db, key.accountId), spentToday(ctx.db, key.id, ctx.config.dayTimeZone)]);
    return {
      accountId: account.id,
      balanceCents: account.balanceCents,
      currency: 'EUR',
      key: {
        id: key.id, name: key.name, start: key.start, createdAt: key.createdAt.toISOString(),
        dailyCapCents: key.dailyCapCents, spentTodayCents: spent, rateLimitPerMinute: key.rateLimitPerMinute,
      },
    };
  });
}
