// An account's members (docs/api.md "Teams: members and roles"): invite by email with a role (a
// one-time link, 7 days, a new one voiding the old), join through it, change roles, remove (their
// sessions in the account end at once, their keys revoked if asked), revoke invites, leave. Every
// change takes the account's member lock first and checks the owners under it: an account never
// has none (409 LAST_OWNER), even when two owners demote each other at the same moment.
import crypto from 'node:crypto';
import { transaction, type Db, type Queryable } from '../db/pool.ts';
import {
  addMember,
  countOwners,
  deleteMember,
  lockMembers,
  memberOf,
  membersOf,
  setRole,
} from '../db/memberships.ts';
import { insertInvite, pendingInvites, voidInvite } from '../db/member-invites.ts';
import { personByEmail } from '../db/people.ts';
import { revokeSessionsOfMember } from '../db/studio-sessions.ts';
import { revokeKeysCreatedBy } from '../db/api-keys.ts';
import { accountById } from '../db/accounts.ts';
import { ApiError, invalidInput } from '../domain/errors.ts';
import { accountFor, authorize } from '../domain/authorize.ts';
import type { Principal, Role } from '../domain/principal.ts';
import { NO_SOURCE, recordAudit } from '../audit/record.ts';
import {
  emailIn,
  lastOwner,
  memberOut,
  notMember,
  roleIn,
  type Change,
  type InviteMail,
  type Invited,
  type Member,
  type On,
  type PendingInvite,
} from './members-shape.ts';

export * from './members-shape.ts';

export const INVITE_TTL_S = 7 * 24 * 3600;
const sha = (s: string) => crypto.createHash('sha256').update(s).digest();

export class Members {
  constructor(
    private db: Db,
    private publicUrl: string,
    private mail: InviteMail | null,
    /** Forgets revoked keys in this process at once (key-resolver.ts). */
    private keys: { forget(keyId: string): void } | null = null,
    /** Where a mail that could not be sent is reported to the operator. */
    private log: { warn(o: object, msg: string): void } | null = null,
  ) {}

  /** The account's members and pending invites. */
  async list(p: Principal, { account }: On = {}) {
    const a = accountFor(p, 'renders.view', account);
    if (!(await accountById(this.db, a)))
      throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${a}.`);
    const [members, invites] = await Promise.all([
      membersOf(this.db, a),
      pendingInvites(this.db, a),
    ]);
    return {
      members: members.map(memberOut),
      invites: invites.map((i): PendingInvite => ({
        email: i.email,
        role: i.role,
        createdAt: i.created_at.toISOString(),
        expiresAt: i.expires_at.toISOString(),
      })),
    };
  }

  /**
   * Invites `email` with `role`: a link by mail (voiding the earlier invite of the email). With
   * `addKnown` (the admin API), a person who exists already is added at once instead.
   */
  async invite(
    p: Principal,
    input: { email: unknown; role: unknown; addKnown?: boolean },
    { account, src = NO_SOURCE }: On = {},
  ): Promise<Invited> {
    const email = emailIn(input.email);
    const role = roleIn(input.role);
    const a = accountFor(p, 'members.invite', account, { roles: [role] });
    const by = p.kind === 'member' ? p.personId : null;
    const out = await transaction(this.db, async (tx) => {
      if (!(await accountById(tx, a))) throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${a}.`);
      await lockMembers(tx, a);
      const known = await personByEmail(tx, email);
      if (known && (await memberOf(tx, a, known.id)))
        throw invalidInput([{ field: 'email', message: 'is a member of this account already' }]);
      await voidInvite(tx, a, email);
      if (known && input.addKnown) {
        await addMember(tx, a, known.id, role);
        await recordAudit(tx, {
          ...src,
          account: a,
          action: 'member.joined',
          actor: p,
          target: { type: 'member', id: known.id },
          details: { email: known.email, role, added: true },
        });
        return {
          status: 'added',
          userId: known.id,
          email: known.email,
          role,
          link: null,
          expiresAt: null,
          mailed: false,
        } as const;
      }
      const token = crypto.randomBytes(32).toString('base64url');
      const hash = sha(token);
      const expires = await insertInvite(tx, { hash, accountId: a, email, role, by }, INVITE_TTL_S);
      await recordAudit(tx, {
        ...src,
        account: a,
        action: 'member.invited',
        actor: p,
        target: { type: 'invite', id: email.toLowerCase() },
        details: { email, role },
      });
      const link = `${this.publicUrl}/join/${token}`;
      return {
        status: 'invited',
        userId: null,
        email,
        role,
        link,
        expiresAt: expires.toISOString(),
        mailed: false,
      } as const;
    });
    // After the commit: the invite stands whatever the mail server does. One that is down or refuses
    // the mail must not turn a done invite into an error page that hides its link: the answer says
    // it was not mailed, and carries the link for the inviter to pass on.
    if (!out.link || !this.mail) return out;
    try {
      await this.sendInvite(a, out.email, out.role, out.link);
      return { ...out, mailed: true };
    } catch (e) {
      this.log?.warn(
        { err: e, account: a },
        'invite mail not sent; the inviter was shown the link',
      );
      return out;
    }
  }

  private async sendInvite(accountId: string, email: string, role: Role, link: string) {
    const account = await accountById(this.db, accountId);
    const name = account?.name ?? account?.email ?? accountId;
    await this.mail!.send(
      email,
      `You are invited to ${name} on Rendergate`,
      `You are invited to join the Rendergate account ${name} as ${role}.\n\n` +
        `Accept within 7 days (the link works once):\n${link}\n\n` +
        'If you did not expect this, ignore this message.\n',
    );
  }

  /** Voids the pending invite of `email`; 404 when there is none. */
  async revokeInvite(p: Principal, emailValue: unknown, on: On = {}): Promise<void> {
    const email = emailIn(emailValue);
    const a = accountFor(p, 'members.invite', on.account, { roles: [] });
    const voided = await transaction(this.db, async (tx) => {
      await lockMembers(tx, a);
      const done = await voidInvite(tx, a, email);
      if (done)
        await recordAudit(tx, {
          ...(on.src ?? NO_SOURCE),
          account: a,
          action: 'invite.revoked',
          actor: p,
          target: { type: 'invite', id: email.toLowerCase() },
          details: { email },
        });
      return done;
    });
    if (!voided) throw new ApiError('NOT_FOUND', `No pending invite for ${email}.`);
  }

  /** Changes a member's role (owners only to or from owner; never leaving no owner). */
  async changeRole(
    p: Principal,
    userId: string,
    roleValue: unknown,
    { account, src = NO_SOURCE }: On = {},
  ) {
    const role = roleIn(roleValue);
    const a = accountFor(p, 'members.role', account, { roles: [role] });
    return transaction(this.db, async (tx): Promise<Member> => {
      await lockMembers(tx, a);
      const m = await memberOf(tx, a, userId);
      if (!m) throw notMember(userId);
      accountFor(p, 'members.role', account, { roles: [m.role, role] });
      if (m.role === 'owner' && role !== 'owner' && (await countOwners(tx, a)) <= 1)
        throw lastOwner();
      if (role === 'owner' && m.role !== 'owner') authorize(p, 'members.makeOwner');
      if (m.role === role) return memberOut(m);
      await setRole(tx, a, userId, role);
      await recordAudit(tx, {
        ...src,
        account: a,
        action: 'member.role_changed',
        actor: p,
        target: { type: 'member', id: userId },
        details: { email: m.email, from: m.role, to: role },
      });
      return memberOut({ ...m, role });
    });
  }

  /**
   * Removes a member (or, when `userId` is the principal's own person, leaves): their sessions in
   * the account end in the same transaction, and the keys they created are revoked if asked.
   */
  async remove(
    p: Principal,
    userId: string,
    opts: { revokeKeys?: boolean } = {},
    { account, src = NO_SOURCE }: On = {},
  ): Promise<Change> {
    const self = p.kind === 'member' && p.personId === userId;
    // Anyone may leave; removing another needs the role to.
    const a = self ? p.account : accountFor(p, 'members.remove', account, { roles: [] });
    const change = await transaction(this.db, async (tx) => {
      await lockMembers(tx, a);
      const m = await memberOf(tx, a, userId);
      if (!m) throw notMember(userId);
      if (!self) accountFor(p, 'members.remove', account, { roles: [m.role] });
      if (m.role === 'owner' && (await countOwners(tx, a)) <= 1) throw lastOwner();
      await deleteMember(tx, a, userId);
      await revokeSessionsOfMember(tx, a, userId);
      const revokedKeys = opts.revokeKeys ? await revokeKeysCreatedBy(tx, a, userId) : [];
      await recordAudit(tx, {
        ...src,
        account: a,
        action: 'member.removed',
        actor: p,
        target: { type: 'member', id: userId },
        details: { email: m.email, role: m.role, left: self, revokedKeys },
      });
      return { accountId: a, userId, from: m.role, to: null, revokedKeys };
    });
    for (const k of change.revokedKeys) this.keys?.forget(k);
    return change;
  }
}

/** Adds a person to an account through an invite's row (the join page); false if a member already. */
export async function joinAccount(
  tx: Queryable,
  accountId: string,
  personId: string,
  role: Role,
): Promise<boolean> {
  await lockMembers(tx, accountId);
  return addMember(tx, accountId, personId, role);
}
