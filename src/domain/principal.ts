// Who acts: one type made once at each edge (a key at /v1 and /openai/v1, a session in the studio,
// the admin token at /admin/v1 and the console, the worker, janitor and Stripe's events as the
// system) and handed to every service that reads or changes an account, instead of a bare account
// id. What each may do is decided in one place, authorize.ts; the audit log names its actor from it
// (actorOf).

/** A key's mode: a test key's renders move no money and are made by the service itself. */
export type KeyMode = 'live' | 'test';

/** A member's role in an account (docs/api.md "Teams: members and roles"), most powerful first. */
export const ROLES = ['owner', 'admin', 'developer', 'billing', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/**
 * An API key acting for its account. `dailyCapCents` is the key's cap as it was looked up with it:
 * the charge checks it in its own statement (the ledger's charge, src/ledger/).
 */
export interface KeyPrincipal {
  readonly kind: 'key';
  readonly account: string;
  readonly keyId: string;
  readonly mode: KeyMode;
  readonly dailyCapCents: number | null;
}

/**
 * A person signed in to the studio, acting in one account with one role. Until people and
 * memberships exist, an account is its one person: `personId` is the account's id and the role is
 * `owner` (Sessions.find).
 */
export interface MemberPrincipal {
  readonly kind: 'member';
  readonly account: string;
  readonly personId: string;
  readonly role: Role;
}

/** The operator: the admin token (/admin/v1, the command line) or a console session. */
export interface OperatorPrincipal {
  readonly kind: 'operator';
}

/** The service itself: the worker, the janitor, Stripe's events. */
export interface SystemPrincipal {
  readonly kind: 'system';
}

export type Principal = KeyPrincipal | MemberPrincipal | OperatorPrincipal | SystemPrincipal;

/** A principal that belongs to one account (a key or a member). */
export type AccountPrincipal = KeyPrincipal | MemberPrincipal;

/** One object each, so that an edge hands them on without making one per request. */
export const OPERATOR: OperatorPrincipal = Object.freeze({ kind: 'operator' });
export const SYSTEM: SystemPrincipal = Object.freeze({ kind: 'system' });

export function keyPrincipal(k: {
  id: string;
  accountId: string;
  mode: KeyMode;
  dailyCapCents: number | null;
}): KeyPrincipal {
  return Object.freeze({
    kind: 'key',
    account: k.accountId,
    keyId: k.id,
    mode: k.mode,
    dailyCapCents: k.dailyCapCents,
  });
}

export function memberPrincipal(account: string, personId: string, role: Role): MemberPrincipal {
  return Object.freeze({ kind: 'member', account, personId, role });
}

/**
 * The renders a principal sees and makes: a key its own mode's; a member (the studio) live ones.
 * (A test key simply sees only test things: another mode's render is unknown to it, a 404.)
 */
export const modeOf = (p: Principal): KeyMode => (p.kind === 'key' ? p.mode : 'live');

/** The audit log's actor (docs/api.md "Audit log"): who did it, from the principal alone. */
export function actorOf(p: Principal): { type: Principal['kind']; id: string | null } {
  switch (p.kind) {
    case 'key':
      return { type: 'key', id: p.keyId };
    case 'member':
      return { type: 'member', id: p.personId };
    default:
      return { type: p.kind, id: null };
  }
}
