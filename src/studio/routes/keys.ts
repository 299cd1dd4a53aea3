// API keys of the signed-in account: create (the key is in that one response and never again: the list
// shows its start), list with last use and today's spend, revoke.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isId } from '../../domain/ids.ts';
import { ApiError } from '../../domain/errors.ts';
import { can } from '../../domain/authorize.ts';
import { signedIn, type StudioCtx } from '../types.ts';
import { page } from '../view.ts';
import { field } from '../form-body.ts';
import { sourceOf } from '../../web/audit-source.ts';

/** "5", "5.5", "5,50" euros → cents; "" → no cap; anything else → undefined. */
export function parseEuros(raw: string): number | null | undefined {
  const s = raw.trim();
  if (s === '') return null;
  const m = /^(\d{1,7})(?:[.,](\d{1,2}))?$/.exec(s);
  return m ? Number(m[1]) * 100 + Number((m[2] ?? '0').padEnd(2, '0')) : undefined;
}

export function registerKeyRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const pre = { preHandler: signedIn(ctx) };
  const keysPage = async (
    req: FastifyRequest,
    reply: FastifyReply,
    extra: Record<string, unknown> = {},
  ) =>
    page(reply, 'keys', req, {
      title: 'API keys',
      // a developer may revoke only the keys they made (domain/authorize.ts)
      keys: (await ctx.apiKeys.list(req.principal, ctx.config.dayTimeZone)).map((k) => ({
        ...k,
        mayRevoke: can(req.principal, 'keys.revoke', { createdBy: k.createdById }),
      })),
      defaultRate: ctx.config.defaultRateLimitPerMinute,
      maxRate: ctx.config.maxRateLimitPerMinute,
      errors: {},
      // "Try every model free" (zero-help.eta) links here with ?mode=test
      values: (req.query as { mode?: string }).mode === 'test' ? { mode: 'test' } : {},
      ...extra,
    });

  app.get('/keys', pre, async (req, reply) => keysPage(req, reply));

  app.post('/keys', pre, async (req, reply) => {
    const name = (field(req.body, 'name') ?? '').trim();
    const capRaw = field(req.body, 'dailyCap') ?? '';
    const rateRaw = (field(req.body, 'rateLimit') ?? '').trim();
    const mode = field(req.body, 'mode') ?? 'live';
    const errors: Record<string, string> = {};
    if (mode !== 'live' && mode !== 'test') errors.mode = 'Choose Live or Test.';
    if (name === '' || name.length > 200)
      errors.name = 'Give the key a name of 1 to 200 characters.';
    const cap = parseEuros(capRaw);
    if (cap === undefined)
      errors.dailyCap =
        'Write an amount in euros such as 5 or 12.50, or leave it empty for no cap.';
    const rate = rateRaw === '' ? undefined : /^\d{1,7}$/.test(rateRaw) ? Number(rateRaw) : NaN;
    const maxRate = ctx.config.maxRateLimitPerMinute;
    if (rate !== undefined && !(rate >= 1 && rate <= maxRate))
      errors.rateLimit = `A whole number of requests per minute, from 1 to ${maxRate}.`;
    const values = { name, dailyCap: capRaw, rateLimit: rateRaw, mode };
    if (Object.keys(errors).length) return keysPage(req, reply.code(400), { errors, values });
    let key;
    try {
      key = await ctx.apiKeys.createOwn(
        req.principal,
        {
          name,
          dailyCapCents: cap ?? null,
          rateLimitPerMinute: rate,
          mode: mode as 'live' | 'test',
        },
        { maxRateLimitPerMinute: maxRate, maxLiveKeys: ctx.config.keysPerAccount },
        sourceOf(req),
      );
    } catch (e) {
      const problem =
        e instanceof ApiError
          ? (e.details?.[0] as { field?: string; message?: string } | undefined)
          : undefined;
      if (!problem?.message) throw e;
      const at = problem.field === 'rateLimitPerMinute' ? 'rateLimit' : 'name';
      return keysPage(req, reply.code(400), {
        errors: { [at]: problem.message[0].toUpperCase() + problem.message.slice(1) + '.' },
        values,
      });
    }
    // The one and only time the key leaves the server; the page is never cached (page() sets no-store).
    return keysPage(req, reply.code(201), { created: key });
  });

  app.post<{ Params: { id: string } }>('/keys/:id/revoke', pre, async (req, reply) => {
    if (!isId('key', req.params.id)) throw new ApiError('KEY_NOT_FOUND', 'There is no such key.');
    if (!(await ctx.apiKeys.revokeOwn(req.principal, req.params.id, sourceOf(req))))
      throw new ApiError('KEY_NOT_FOUND', 'There is no such key.');
    return reply.redirect('/keys', 303);
  });
}
