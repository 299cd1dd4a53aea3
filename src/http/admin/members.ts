// The operator's view of an account's members (docs/api.md "Teams: members and roles"): list,
// add (a known person at once, anyone else invited by link), change a role, remove. The rules are
// the Members page's (services/members.ts): a role that does not exist is 400, an account left
// without an owner 409 LAST_OWNER.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { isId } from '../../domain/ids.ts';
import { ROLES } from '../../domain/principal.ts';
import { objectBody } from '../../domain/body.ts';
import { queryParam } from '../body.ts';
import type { Ctx } from '../../web/context.ts';
import { Fields } from './fields.ts';

type Params = { Params: { id: string; userId: string } };

export function registerAdminMembers(app: FastifyInstance, ctx: Ctx) {
  const accountOf = (raw: string) => {
    if (!isId('acct', raw)) throw new ApiError('ACCOUNT_NOT_FOUND', 'No such account.');
    return raw;
  };
  const userOf = (raw: string) => {
    if (!isId('usr', raw)) throw new ApiError('NOT_FOUND', `No member ${raw} in this account.`);
    return raw;
  };
  const src = (req: { ip: string; headers: Record<string, unknown> }) => ({
    ip: req.ip,
    userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
  });

  app.get<{ Params: { id: string } }>('/accounts/:id/members', async (req) => {
    const { members } = await ctx.members.list(req.principal, {
      account: accountOf(req.params.id),
    });
    return { data: members };
  });

  app.post<{ Params: { id: string } }>('/accounts/:id/members', async (req, reply) => {
    const account = accountOf(req.params.id);
    const f = new Fields(objectBody(req.body), ['email', 'role']);
    const email = f.string('email', { required: true, max: 254 });
    const role = f.oneOf('role', ROLES);
    f.done();
    const done = await ctx.members.invite(
      req.principal,
      { email, role, addKnown: true },
      { account, src: src(req) },
    );
    return reply.code(201).send(done);
  });

  app.patch<Params>('/accounts/:id/members/:userId', async (req) => {
    const account = accountOf(req.params.id);
    const f = new Fields(objectBody(req.body), ['role']);
    const role = f.oneOf('role', ROLES);
    f.done();
    return ctx.members.changeRole(req.principal, userOf(req.params.userId), role, {
      account,
      src: src(req),
    });
  });

  app.delete<Params>('/accounts/:id/members/:userId', async (req) => {
    const account = accountOf(req.params.id);
    const revoke = queryParam(req.query, 'revokeKeys');
    if (revoke !== undefined && revoke !== 'true' && revoke !== 'false')
      throw new ApiError('INVALID_INPUT', 'revokeKeys: true or false.', [
        { field: 'revokeKeys', message: 'must be true or false' },
      ]);
    const change = await ctx.members.remove(
      req.principal,
      userOf(req.params.userId),
      { revokeKeys: revoke === 'true' },
      { account, src: src(req) },
    );
    return { userId: change.userId, removed: true, revokedKeys: change.revokedKeys };
  });
}
