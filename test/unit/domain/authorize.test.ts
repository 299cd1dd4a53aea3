// The whole table of who may do what (docs/api.md "Teams: members and roles"), every role × action,
// written out here from the contract rather than derived from domain/authorize.ts: a change to
// either side shows as a difference. Plus keys, test keys, the operator, the system, and the
// refusals' sentences (403 FORBIDDEN, naming what is missing).
import { describe, expect, it } from 'vitest';
import {
  ACTIONS,
  accountFor,
  authorize,
  can,
  refusal,
  type Action,
} from '../../../src/domain/authorize.ts';
import { ApiError } from '../../../src/domain/errors.ts';
import {
  actorOf,
  keyPrincipal,
  memberPrincipal,
  modeOf,
  OPERATOR,
  ROLES,
  SYSTEM,
  type Role,
} from '../../../src/domain/principal.ts';

// One line per action: owner, admin, developer, billing, viewer. 'own': only on a key they created;
// 'no owner': only when no owner is involved. Then whether a key may.
type Cell = boolean | 'own' | 'no owner';
const Y = true;
const N = false;
const CONTRACT: Record<Action, { roles: [Cell, Cell, Cell, Cell, Cell]; key: boolean }> = {
  'models.view': { roles: [Y, Y, Y, Y, Y], key: Y },
  'renders.view': { roles: [Y, Y, Y, Y, Y], key: Y },
  'usage.view': { roles: [Y, Y, Y, Y, Y], key: Y },
  'ledger.view': { roles: [Y, Y, Y, Y, Y], key: Y },
  'receipts.view': { roles: [Y, Y, Y, Y, Y], key: Y },
  'renders.create': { roles: [Y, Y, Y, N, N], key: Y },
  'renders.cancel': { roles: [Y, Y, Y, N, N], key: Y },
  'renders.delete': { roles: [Y, Y, Y, N, N], key: Y },
  'keys.create': { roles: [Y, Y, Y, N, N], key: N },
  'keys.revoke': { roles: [Y, Y, 'own', N, N], key: N },
  'webhooks.manage': { roles: [Y, Y, Y, N, N], key: Y },
  'credit.add': { roles: [Y, Y, N, Y, N], key: N },
  'autoRecharge.manage': { roles: [Y, Y, N, Y, N], key: N },
  'lowBalanceAlert.manage': { roles: [Y, Y, N, Y, N], key: N },
  'budgets.account': { roles: [Y, Y, N, Y, N], key: N },
  'budgets.member': { roles: [Y, Y, N, Y, N], key: N },
  'budgets.key': { roles: [Y, Y, 'own', Y, N], key: N },
  'members.invite': { roles: [Y, 'no owner', N, N, N], key: N },
  'members.remove': { roles: [Y, 'no owner', N, N, N], key: N },
  'members.role': { roles: [Y, 'no owner', N, N, N], key: N },
  'audit.view': { roles: [Y, Y, N, N, N], key: N },
  'account.requireTwoFactor': { roles: [Y, N, N, N, N], key: N },
  'account.rename': { roles: [Y, N, N, N, N], key: N },
  'members.makeOwner': { roles: [Y, N, N, N, N], key: N },
  'accounts.administer': { roles: [N, N, N, N, N], key: N },
  'renders.refund': { roles: [N, N, N, N, N], key: N },
};

const member = (role: Role) => memberPrincipal('acct_1', 'person_1', role);
const live = keyPrincipal({ id: 'key_1', accountId: 'acct_1', mode: 'live', dailyCapCents: null });
const test = keyPrincipal({ id: 'key_2', accountId: 'acct_1', mode: 'test', dailyCapCents: 500 });

const forbidden = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).code).toBe('FORBIDDEN');
    expect((e as ApiError).status).toBe(403);
    return (e as ApiError).message;
  }
  throw new Error('not refused');
};

describe('authorize: the contract table, every role × action', () => {
  it('lists exactly the actions written out here', () => {
    expect([...ACTIONS].sort()).toEqual(Object.keys(CONTRACT).sort());
  });

  for (const action of ACTIONS) {
    ROLES.forEach((role, i) => {
      const cell = CONTRACT[action].roles[i];
      it(`${role} ${cell === true ? 'may' : cell === false ? 'may not' : `(${cell})`} ${action}`, () => {
        const p = member(role);
        if (cell === true) {
          expect(can(p, action)).toBe(true);
          expect(() => authorize(p, action)).not.toThrow();
        } else if (cell === false) {
          expect(can(p, action)).toBe(false);
          expect(forbidden(() => authorize(p, action))).toContain(`Your role (${role})`);
        } else if (cell === 'own') {
          expect(can(p, action, { createdBy: 'person_1' })).toBe(true);
          expect(can(p, action, { createdBy: 'person_2' })).toBe(false);
          expect(can(p, action, { createdBy: null })).toBe(false);
          expect(can(p, action)).toBe(false);
        } else {
          expect(can(p, action, { roles: ['developer', 'viewer'] })).toBe(true);
          expect(can(p, action, { roles: ['owner', 'admin'] })).toBe(false);
          expect(can(p, action, { roles: ['admin', 'owner'] })).toBe(false);
          expect(can(p, action)).toBe(false); // not knowing who is involved is not enough
        }
      });
    });
  }
});

describe('authorize: keys, the operator, the system', () => {
  for (const action of ACTIONS) {
    it(`a key ${CONTRACT[action].key ? 'may' : 'may not'} ${action}; the operator and the system may`, () => {
      expect(can(live, action)).toBe(CONTRACT[action].key);
      expect(can(test, action)).toBe(CONTRACT[action].key);
      expect(can(OPERATOR, action)).toBe(true);
      expect(can(SYSTEM, action)).toBe(true);
    });
  }

  it('a test key may not act on a live thing; a live key and a test thing are as before', () => {
    const msg = forbidden(() => authorize(test, 'webhooks.manage', { mode: 'live' }));
    expect(msg).toBe(
      'A test key may not manage webhook endpoints in live mode: that needs a live key.',
    );
    expect(can(test, 'renders.cancel', { mode: 'live' })).toBe(false);
    expect(can(test, 'renders.cancel', { mode: 'test' })).toBe(true);
    expect(can(live, 'renders.cancel', { mode: 'live' })).toBe(true);
    expect(can(member('owner'), 'renders.cancel', { mode: 'live' })).toBe(true);
  });
});

describe('refusals name what is missing', () => {
  it('a role: which roles may', () => {
    expect(refusal(member('viewer'), 'renders.create')).toBe(
      'Your role (viewer) may not start renders: that needs an owner, admin or developer.',
    );
    expect(refusal(member('developer'), 'credit.add')).toBe(
      'Your role (developer) may not add credit: that needs an owner, admin or billing.',
    );
    expect(refusal(member('admin'), 'account.rename')).toBe(
      'Your role (admin) may not rename the account: that needs an owner.',
    );
    expect(refusal(member('owner'), 'renders.refund')).toBe(
      'Your role (owner) may not refund a finished render: that needs the operator.',
    );
  });

  it('their own keys, and the owner role', () => {
    expect(refusal(member('developer'), 'keys.revoke', { createdBy: 'person_2' })).toBe(
      'Your role (developer) may revoke API keys only for a key you created; any other key needs an owner or admin.',
    );
    expect(refusal(member('admin'), 'members.role', { roles: ['admin', 'owner'] })).toBe(
      'Your role (admin) may not give or take the owner role: that needs an owner.',
    );
  });

  it('a key: who may, in the studio', () => {
    expect(refusal(live, 'keys.create')).toBe(
      'An API key may not create API keys: that needs an owner, admin or developer signed in to the studio.',
    );
    expect(refusal(live, 'accounts.administer')).toBe(
      'An API key may not administer accounts: that needs the operator.',
    );
  });
});

describe('accountFor: the account acted on', () => {
  it("a key's and a member's own; the operator's named; another account refused", () => {
    expect(accountFor(live, 'renders.view')).toBe('acct_1');
    expect(accountFor(member('viewer'), 'ledger.view', 'acct_1')).toBe('acct_1');
    expect(accountFor(OPERATOR, 'ledger.view', 'acct_9')).toBe('acct_9');
    expect(accountFor(SYSTEM, 'credit.add', 'acct_9')).toBe('acct_9');
    expect(forbidden(() => accountFor(live, 'renders.view', 'acct_9'))).toBe(
      'This key acts only for its own account.',
    );
    expect(() => accountFor(OPERATOR, 'ledger.view')).toThrow(/no account named/);
    forbidden(() => accountFor(member('billing'), 'renders.create'));
  });
});

describe('principals', () => {
  it("are made once, frozen; a key's mode, a member's live; the audit log's actor", () => {
    expect(
      Object.isFrozen(live) && Object.isFrozen(member('owner')) && Object.isFrozen(OPERATOR),
    ).toBe(true);
    expect(live).toEqual({
      kind: 'key',
      account: 'acct_1',
      keyId: 'key_1',
      mode: 'live',
      dailyCapCents: null,
    });
    expect([modeOf(live), modeOf(test), modeOf(member('viewer')), modeOf(OPERATOR)]).toEqual([
      'live',
      'test',
      'live',
      'live',
    ]);
    expect(actorOf(test)).toEqual({ type: 'key', id: 'key_2' });
    expect(actorOf(member('admin'))).toEqual({ type: 'member', id: 'person_1' });
    expect(actorOf(OPERATOR)).toEqual({ type: 'operator', id: null });
    expect(actorOf(SYSTEM)).toEqual({ type: 'system', id: null });
  });
});
