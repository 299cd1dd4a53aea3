// Every role against every studio action (docs/api.md "Teams: members and roles"): each answer is
// checked, allowed (anything but 403: done, or the thing named does not exist) or refused with the
// 403 page naming what is missing, and a refused post changes nothing. The posts are crafted: the
// page may not offer them, so nothing a role may not do is reachable by a form post or a URL.
import { beforeAll, describe, expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { StudioSession } from './http-session.ts';
import { PASSWORD, uniqueEmail } from './helpers.ts';
import { ROLES, type Role } from '../../src/domain/principal.ts';

const f = serviceFixture();
const NO_GEN = `gen_${'0'.repeat(32)}`;
const NO_WEBHOOK = `whe_${'0'.repeat(32)}`;

interface Row {
  does: string;
  method: 'GET' | 'POST';
  path: () => string;
  form?: () => Record<string, string>;
  may: readonly Role[];
  /** Puts back what an allowed call changed, so that the next role meets the same account. */
  after?: () => Promise<void>;
}

const ALL = ROLES;
const BUILDERS: Role[] = ['owner', 'admin', 'developer'];
const MANAGERS: Role[] = ['owner', 'admin'];
const PAYERS: Role[] = ['owner', 'admin', 'billing'];

const s: Partial<Record<Role, StudioSession>> = {};
const ids: Record<string, string> = {};
let account = '';

const q = (sql: string, v: unknown[] = []) => f.dbh.db.query(sql, v);

beforeAll(async () => {
  const owner = new StudioSession(f.svc.base);
  const ownerEmail = await owner.signUp();
  s.owner = owner;
  account = (await q('SELECT id FROM accounts WHERE email = $1', [ownerEmail])).rows[0].id;
  ids.owner = (await q('SELECT id FROM people WHERE email = $1', [ownerEmail])).rows[0].id;
  // one person per other role, and a spare member the member actions are done to
  for (const role of [...ROLES.slice(1), 'target'] as const) {
    await owner.get('/members');
    const email = uniqueEmail();
    const made = await owner.post('/members/invite', {
      email,
      role: role === 'target' ? 'developer' : role,
    });
    const link = /id="invite-link" readonly value="([^"]+)"/.exec(made.text)![1];
    const path = new URL(link).pathname;
    const person = new StudioSession(f.svc.base);
    await person.get(path);
    expect((await person.post(path, { password: PASSWORD })).status).toBe(303);
    if (role !== 'target') s[role] = person;
    ids[role] = (await q('SELECT id FROM people WHERE email = $1', [email])).rows[0].id;
  }
  await owner.get('/keys');
  await owner.post('/keys', { name: 'owners key' });
  ids.key = (await q("SELECT id FROM api_keys WHERE name = 'owners key'")).rows[0].id;
});

const resetTarget = async () => {
  await q(
    `INSERT INTO memberships (account_id, person_id, role) VALUES ($1, $2, 'developer')
     ON CONFLICT (account_id, person_id) DO UPDATE SET role = 'developer'`,
    [account, ids.target],
  );
};

const ROWS: Row[] = [
  { does: 'see models', method: 'GET', path: () => '/', may: ALL },
  { does: 'see History', method: 'GET', path: () => '/history', may: ALL },
  { does: 'see Usage', method: 'GET', path: () => '/usage', may: ALL },
  { does: 'see the ledger', method: 'GET', path: () => '/usage/ledger.csv', may: ALL },
  { does: 'see keys', method: 'GET', path: () => '/keys', may: ALL },
  { does: 'see members', method: 'GET', path: () => '/members', may: ALL },
  {
    does: 'cancel a render',
    method: 'POST',
    path: () => `/history/${NO_GEN}/cancel`,
    may: BUILDERS,
  },
  {
    does: 'delete a render',
    method: 'POST',
    path: () => `/history/${NO_GEN}/delete`,
    may: BUILDERS,
  },
  {
    does: 'create a key',
    method: 'POST',
    path: () => '/keys',
    form: () => ({ name: 'matrix' }),
    may: BUILDERS,
    after: async () => {
      await q("UPDATE api_keys SET revoked_at = now() WHERE name = 'matrix'");
    },
  },
  {
    does: "revoke another member's key",
    method: 'POST',
    path: () => `/keys/${ids.key}/revoke`,
    may: MANAGERS,
    after: async () => {
      await q('UPDATE api_keys SET revoked_at = NULL WHERE id = $1', [ids.key]);
    },
  },
  { does: 'see webhook endpoints', method: 'GET', path: () => '/webhooks', may: BUILDERS },
  {
    does: 'delete a webhook endpoint',
    method: 'POST',
    path: () => `/webhooks/${NO_WEBHOOK}/delete`,
    may: BUILDERS,
  },
  {
    does: 'invite a member',
    method: 'POST',
    path: () => '/members/invite',
    form: () => ({ email: uniqueEmail(), role: 'viewer' }),
    may: MANAGERS,
  },
  {
    does: 'invite an owner',
    method: 'POST',
    path: () => '/members/invite',
    form: () => ({ email: uniqueEmail(), role: 'owner' }),
    may: ['owner'],
  },
  {
    does: 'revoke an invite',
    method: 'POST',
    path: () => '/members/invites/revoke',
    form: () => ({ email: 'nobody@example.test' }),
    may: MANAGERS,
  },
  {
    does: "change a member's role",
    method: 'POST',
    path: () => `/members/${ids.target}/role`,
    form: () => ({ role: 'billing' }),
    may: MANAGERS,
    after: resetTarget,
  },
  {
    does: 'make another member owner',
    method: 'POST',
    path: () => `/members/${ids.target}/role`,
    form: () => ({ role: 'owner' }),
    may: ['owner'],
    after: resetTarget,
  },
  ...(
    [
      ['set the account budget', 'account'],
      ["set a member's budget", 'member'],
      ["set the budget of another member's key", 'key'],
    ] as const
  ).map(([does, scope]): Row => ({
    does,
    method: 'POST',
    path: () => '/usage/budgets',
    form: () => ({
      whose:
        scope === 'account' ? 'account' : `${scope}:${ids[scope === 'key' ? 'key' : 'target']}`,
      period: 'week',
      limit: '5',
    }),
    may: PAYERS,
    after: async () => {
      await q('DELETE FROM budgets WHERE account_id = $1', [account]);
    },
  })),
  {
    does: 'remove the account budget',
    method: 'POST',
    path: () => '/usage/budgets/remove',
    form: () => ({ whose: 'account', period: 'day' }),
    may: PAYERS,
  },
  {
    does: 'set the low-balance alert',
    method: 'POST',
    path: () => '/usage/low-balance',
    form: () => ({ lowBalance: '' }),
    may: PAYERS,
  },
  {
    // `false`, as it stands: an allowed call changes nothing the next role would meet
    does: 'require two-factor',
    method: 'POST',
    path: () => '/account/two-factor/require',
    form: () => ({ required: 'false' }),
    may: ['owner'],
  },
  {
    does: 'rename the account',
    method: 'POST',
    path: () => '/account/name',
    form: () => ({ name: 'Matrix' }),
    may: ['owner'],
    after: async () => {
      await q('UPDATE accounts SET name = NULL WHERE id = $1', [account]);
    },
  },
  {
    does: 'remove a member',
    method: 'POST',
    path: () => `/members/${ids.target}/remove`,
    form: () => ({}),
    may: MANAGERS,
    after: resetTarget,
  },
];

describe('the role matrix', () => {
  for (const row of ROWS)
    for (const role of ROLES)
      it(`${role}: ${row.does} → ${row.may.includes(role) ? 'allowed' : '403'}`, async () => {
        const who = s[role]!;
        const r =
          row.method === 'GET'
            ? await who.get(row.path())
            : (await who.get('/members'), await who.post(row.path(), row.form?.() ?? {}));
        if (row.may.includes(role)) {
          expect(r.status, r.text.slice(0, 400)).not.toBe(403);
          expect(r.status).toBeLessThan(500);
          await row.after?.();
        } else {
          expect(r.status).toBe(403);
          expect(r.text).toContain('<h1>Not allowed</h1>');
          expect(r.text).toMatch(new RegExp(`Your role \\(${role}\\) may `));
        }
      });

  it('a member of one account cannot reach another account by a crafted post or URL', async () => {
    const stranger = new StudioSession(f.svc.base);
    await stranger.signUp();
    await stranger.get('/members');
    const crafted = await stranger.post(`/members/${ids.target}/remove`, {});
    expect(crafted.status).toBe(404);
    expect((await stranger.post('/switch-account', { account })).status).toBe(403);
    expect((await q('SELECT 1 FROM memberships WHERE person_id = $1', [ids.target])).rowCount).toBe(
      1,
    );
  });
});
