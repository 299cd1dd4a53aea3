// The operator API under /admin/v1, behind the admin token (compared in constant time; an API key is
// never an admin token). The token's bearer is the operator: the principal every route hands on.
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { isId } from '../../domain/ids.ts';
import { decodeCursor, parseLimit } from '../../services/paging.ts';
import { queryParam } from '../body.ts';
import { objectBody } from '../../domain/body.ts';
import type { Ctx } from '../../web/context.ts';
import { sourceOf } from '../../web/audit-source.ts';
import { EMAIL, Fields, MAX_CENTS } from './fields.ts';
import { VERSION } from '../../domain/version.ts';
import { MAX_KEY_RATE_PER_MINUTE } from '../../domain/limits.ts';
import { OPERATOR } from '../../domain/principal.ts';
import { registerAdminMembers } from './members.ts';
import { registerAdminBudgets } from './budgets.ts';

const sha = (s: string) => crypto.createHash('sha256').update(s).digest();

export async function registerAdmin(app: FastifyInstance, ctx: Ctx) {
  const expected = sha(ctx.adminToken);
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (req) => {
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m || !crypto.timingSafeEqual(sha(m[1]), expected)) {
      throw new ApiError(
        'ADMIN_TOKEN_INVALID',
        'The admin API needs "Authorization: Bearer <admin token>".',
      );
    }
    req.principal = OPERATOR;
  });

  const accountId = (raw: string) => {
    if (!isId('acct', raw)) throw new ApiError('ACCOUNT_NOT_FOUND', 'No such account.');
    return raw;
  };

  app.post('/accounts', async (req, reply) => {
    const f = new Fields(objectBody(req.body), ['email', 'name']);
    const email = f.string('email', { required: true, max: 254, pattern: EMAIL });
    const name = f.string('name', { max: 200 });
    f.done();
    return reply.code(201).send(await ctx.accounts.create(req.principal, email!, name ?? null));
  });

  // Newest first; `email` finds one account by its exact email, `query` by part of one (or an id).
  app.get('/accounts', async (req) => {
    const limit = parseLimit(queryParam(req.query, 'limit'));
    const cursor = queryParam(req.query, 'cursor');
    const email = queryParam(req.query, 'email');
    const query = queryParam(req.query, 'query');
    if ((query?.length ?? 0) > 254 || (email?.length ?? 0) > 254) {
      throw new ApiError('INVALID_INPUT', 'query and email: at most 254 characters.', [
        { field: email ? 'email' : 'query', message: 'too long' },
      ]);
    }
    return ctx.accounts.list(req.principal, { limit, cursor: cursor ?? null, email, query });
  });

  // What the operator's tools need to know about this server: the links it makes start with publicUrl.
  app.get('/server', async () => ({ version: VERSION, publicUrl: ctx.config.publicUrl }));

  app.post('/invites', async (req, reply) => {
    const f = new Fields(objectBody(req.body), ['email', 'name']);
    const email = f.string('email', { required: true, max: 254, pattern: EMAIL });
    const name = f.string('name', { max: 200 });
    f.done();
    return reply
      .code(201)
      .send(await ctx.accounts.invite(req.principal, ctx.config.publicUrl, email!, name ?? null));
  });

  app.post('/reset-links', async (req, reply) => {
    const f = new Fields(objectBody(req.body), ['email']);
    const email = f.string('email', { required: true, max: 254, pattern: EMAIL });
    f.done();
    return reply
      .code(201)
      .send(await ctx.accounts.resetLink(req.principal, ctx.config.publicUrl, email!));
  });

  app.get<{ Params: { id: string } }>('/accounts/:id', async (req) =>
    ctx.accounts.get(req.principal, accountId(req.params.id)),
  );

  app.post<{ Params: { id: string } }>('/accounts/:id/credits', async (req, reply) => {
    const id = accountId(req.params.id);
    const f = new Fields(objectBody(req.body), ['amountCents', 'reason']);
    const amount = f.int('amountCents', { required: true, min: 1, max: MAX_CENTS });
    const reason = f.string('reason', { max: 500 });
    f.done();
    return reply
      .code(201)
      .send(await ctx.accounts.credit(req.principal, id, amount!, reason ?? null, sourceOf(req)));
  });

  app.post<{ Params: { id: string } }>('/accounts/:id/keys', async (req, reply) => {
    const id = accountId(req.params.id);
    // No body at all means no options; a JSON null is a body that is not an object.
    const f = new Fields(objectBody(req.body === undefined ? {} : req.body), [
      'name',
      'dailyCapCents',
      'rateLimitPerMinute',
      'mode',
    ]);
    const name = f.string('name', { max: 200 });
    const cap = f.int('dailyCapCents', { min: 0, max: MAX_CENTS, nullable: true });
    const rate = f.int('rateLimitPerMinute', { min: 1, max: MAX_KEY_RATE_PER_MINUTE });
    const mode = f.oneOf('mode', ['live', 'test'] as const);
    f.done();
    const opts = { name, dailyCapCents: cap ?? null, rateLimitPerMinute: rate ?? undefined, mode };
    const key = await ctx.apiKeys.create(req.principal, id, opts, sourceOf(req));
    return reply.code(201).send(key);
  });

  registerAdminMembers(app, ctx);
  registerAdminBudgets(app, ctx);

  app.delete<{ Params: { id: string } }>('/keys/:id', async (req) => {
    if (!isId('key', req.params.id)) throw new ApiError('KEY_NOT_FOUND', 'No such key.');
    return ctx.apiKeys.revoke(req.principal, req.params.id, sourceOf(req));
  });

  app.get<{ Params: { id: string } }>('/accounts/:id/ledger', async (req) => {
    const limit = parseLimit(queryParam(req.query, 'limit'));
    const cursor = queryParam(req.query, 'cursor');
    if (cursor !== undefined) decodeCursor(cursor);
    return ctx.accounts.ledger(req.principal, limit, cursor ?? null, accountId(req.params.id));
  });

  // The account's audit log, newest first, paged like every list (docs/api.md "Audit log").
  app.get<{ Params: { id: string } }>('/accounts/:id/audit-events', async (req) => {
    const limit = parseLimit(queryParam(req.query, 'limit'));
    const cursor = queryParam(req.query, 'cursor') ?? null;
    const query = {
      limit,
      cursor,
      action: queryParam(req.query, 'action'),
      actor: queryParam(req.query, 'actor'),
    };
    return ctx.auditLog.list(req.principal, query, accountId(req.params.id));
  });

  app.post<{ Params: { id: string } }>('/generations/:id/refund', async (req) => {
    if (!isId('gen', req.params.id))
      throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    return ctx.generations.adminRefund(req.principal, req.params.id);
  });
}
