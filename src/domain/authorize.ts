// The one table of who may do what (docs/api.md "Teams: members and roles"), and the one check of
// it. Services call authorize() (or accountFor(), which also says which account is acted on) at the
// start of every use case that reads or changes an account; a refusal is 403 FORBIDDEN, its message
// naming what is missing. The operator and the system may do everything; keys act for their account
// as before (a test key not on live things); members as their role allows.
import { ApiError } from './errors.ts';
import { ROLES, type KeyMode, type Principal, type Role } from './principal.ts';

/**
 * A role's grant: yes, no, `own` (only on what they created: `Target.createdBy`), or `notOwner`
 * (only when no owner is involved: `Target.roles`).
 */
type Grant = boolean | 'own' | 'notOwner';

interface Rule {
  /** What the action does, as a refusal says it ("may not …"). */
  does: string;
  roles: Readonly<Record<Role, Grant>>;
  /** Whether an API key may do it (keys act for the whole account). */
  key: boolean;
}

const grants = (owner: Grant, admin: Grant, developer: Grant, billing: Grant, viewer: Grant) =>
  ({ owner, admin, developer, billing, viewer }) as const;
const EVERYONE = grants(true, true, true, true, true);
const BUILDERS = grants(true, true, true, false, false); // render, keys, webhooks
const PAYERS = grants(true, true, false, true, false); // credit, auto-recharge, alerts, budgets
const MANAGERS = grants(true, 'notOwner', false, false, false); // members
const OVERSEERS = grants(true, true, false, false, false); // the audit log
const OWNER = grants(true, false, false, false, false);
const NOBODY = grants(false, false, false, false, false); // the operator's alone

const rule = (does: string, roles: Rule['roles'], key: boolean): Rule => ({ does, roles, key });

/** Every action, one row of the contract's table each (render, cancel and delete have one row). */
export const RULES = {
  // see models, History, Usage, the ledger, receipts
  'models.view': rule('see the models', EVERYONE, true),
  'renders.view': rule('see renders', EVERYONE, true),
  'usage.view': rule('see usage', EVERYONE, true),
  'ledger.view': rule('see the ledger', EVERYONE, true),
  'receipts.view': rule('see receipts', EVERYONE, true),
  // render, cancel, delete renders (an upload is a render's input: made and removed as renders are)
  'renders.create': rule('start renders', BUILDERS, true),
  'renders.cancel': rule('cancel renders', BUILDERS, true),
  'renders.delete': rule('delete renders', BUILDERS, true),
  // create keys; revoke a key (a developer their own)
  'keys.create': rule('create API keys', BUILDERS, false),
  'keys.revoke': rule('revoke API keys', grants(true, true, 'own', false, false), false),
  'webhooks.manage': rule('manage webhook endpoints', BUILDERS, true),
  // add credit, auto-recharge, low-balance alert, budgets of the account, members and keys
  'credit.add': rule('add credit', PAYERS, false),
  'autoRecharge.manage': rule('change auto-recharge', PAYERS, false),
  'lowBalanceAlert.manage': rule('change the low-balance alert', PAYERS, false),
  'budgets.account': rule("change the account's budgets", PAYERS, false),
  'budgets.member': rule("change members' budgets", PAYERS, false),
  'budgets.key': rule("change keys' budgets", grants(true, true, 'own', true, false), false),
  // invite and remove members, change roles (an admin never to or from owner)
  'members.invite': rule('invite members', MANAGERS, false),
  'members.remove': rule('remove members', MANAGERS, false),
  'members.role': rule("change members' roles", MANAGERS, false),
  'audit.view': rule('see the audit log', OVERSEERS, false),
  // require a second factor, rename the account, make another member owner
  'account.requireTwoFactor': rule('require a second factor', OWNER, false),
  'account.rename': rule('rename the account', OWNER, false),
  'members.makeOwner': rule('make another member owner', OWNER, false),
  // the operator's: accounts, links, credit and keys of any account, refunds
  'accounts.administer': rule('administer accounts', NOBODY, false),
  'renders.refund': rule('refund a finished render', NOBODY, false),
} as const satisfies Record<string, Rule>;

export type Action = keyof typeof RULES;
export const ACTIONS = Object.keys(RULES) as Action[];

/** What an action is done to, where the table's answer depends on it. */
export interface Target {
  /** The thing's mode: a test key may not act on a live thing. */
  mode?: KeyMode;
  /** Who created it (a person's id; null: the operator or nobody known), for `own` grants. */
  createdBy?: string | null;
  /** The roles a member change involves (the member's role before and after), for `notOwner`. */
  roles?: readonly Role[];
}

/** Who may do it, for a refusal's message: "an owner, admin or developer", or "the operator". */
function whoMay(r: Rule): string {
  const may = ROLES.filter((role) => r.roles[role] === true);
  if (may.length === 0) return 'the operator';
  const list = may.length === 1 ? may[0] : `${may.slice(0, -1).join(', ')} or ${may.at(-1)!}`;
  return `${/^[aeiou]/.test(list) ? 'an' : 'a'} ${list}`;
}

/** Why `p` may not do `action` (to `on`): one sentence naming what is missing; null if it may. */
export function refusal(p: Principal, action: Action, on?: Target): string | null {
  const r: Rule = RULES[action];
  switch (p.kind) {
    case 'operator':
    case 'system':
      return null;
    case 'key': {
      if (!r.key) {
        const who = whoMay(r);
        const where = who === 'the operator' ? '' : ' signed in to the studio';
        return `An API key may not ${r.does}: that needs ${who}${where}.`;
      }
      if (p.mode === 'test' && on?.mode === 'live')
        return `A test key may not ${r.does} in live mode: that needs a live key.`;
      return null;
    }
    case 'member': {
      const g = r.roles[p.role];
      if (g === true) return null;
      if (g === 'own') {
        if (on?.createdBy != null && on.createdBy === p.personId) return null;
        const others = `any other key needs ${whoMay(r)}`;
        return `Your role (${p.role}) may ${r.does} only for a key you created; ${others}.`;
      }
      if (g === 'notOwner') {
        if (on?.roles !== undefined && !on.roles.includes('owner')) return null;
        return `Your role (${p.role}) may not give or take the owner role: that needs an owner.`;
      }
      return `Your role (${p.role}) may not ${r.does}: that needs ${whoMay(r)}.`;
    }
  }
}

/** Whether `p` may do `action` (to `on`): for pages that offer only what their reader may do. */
export const can = (p: Principal, action: Action, on?: Target): boolean =>
  refusal(p, action, on) === null;

/** Throws 403 FORBIDDEN, naming what is missing, unless `p` may do `action` (to `on`). */
export function authorize(p: Principal, action: Action, on?: Target): void {
  const why = refusal(p, action, on);
  if (why !== null) throw new ApiError('FORBIDDEN', why);
}

/**
 * The account `p` does `action` in, once authorized: a key's or a member's own; for the operator
 * and the system, which have none, the one `named`. A key or member naming another account is
 * refused.
 */
export function accountFor(p: Principal, action: Action, named?: string, on?: Target): string {
  authorize(p, action, on);
  if (p.kind === 'key' || p.kind === 'member') {
    if (named !== undefined && named !== p.account)
      throw new ApiError('FORBIDDEN', `This ${p.kind} acts only for its own account.`);
    return p.account;
  }
  if (named === undefined) throw new Error(`${p.kind}: no account named for ${action}`);
  return named;
}
