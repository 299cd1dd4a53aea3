// GET /v1/usage: the key's account's spend on renders over a range of days (docs/api.md "Usage").
import type { FastifyInstance } from 'fastify';
import { queryParam } from '../body.ts';
import type { Ctx } from '../../web/context.ts';

export function registerUsage(app: FastifyInstance, ctx: Ctx) {
  app.get('/usage', async (req) =>
    ctx.usage.report(req.principal, {
      from: queryParam(req.query, 'from'),
      to: queryParam(req.query, 'to'),
      groupBy: queryParam(req.query, 'groupBy'),
    }),
  );
}
