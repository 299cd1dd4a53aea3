// What the members use cases take and answer (services/members.ts): the shapes of members, invites
// and changes, and the checks of what a client names (a role, an email), each a 400 naming its field.
import type { MemberRow } from '../db/memberships.ts';
import { ApiError, invalidInput } from '../domain/errors.ts';
import { ROLES, type Role } from '../domain/principal.ts';
import type { AuditSource } from '../audit/record.ts';
import { EMAIL } from './passwords.ts';

/** Where invitations go (the studio's SMTP mailer), when mail is set up. */
export interface InviteMail {
  send(to: string, subject: string, text: string): Promise<void>;
}

export interface Member {
  userId: string;
  email: string;
  role: Role;
  joinedAt: string;
}

export interface PendingInvite {
  email: string;
  role: Role;
  createdAt: string;
  expiresAt: string;
}

export interface Invited {
  status: 'added' | 'invited';
  userId: string | null;
  email: string;
  role: Role;
  /** The one-time link (the operator's answers and tests; the person gets it by mail). */
  link: string | null;
  expiresAt: string | null;
  /**
   * Whether the link went out by mail: false when no mail server is set up or it refused the mail
   * (the invite stands either way; the inviter then passes the link on).
   */
  mailed: boolean;
}

/** Something done to a member, for the audit log and the caller (keys revoked with a removal). */
export interface Change {
  accountId: string;
  userId: string;
  from: Role;
  to: Role | null;
  revokedKeys: string[];
}

export const memberOut = (r: MemberRow): Member => ({
  userId: r.person_id,
  email: r.email,
  role: r.role,
  joinedAt: r.joined_at.toISOString(),
});

/** A role named by a client: one of ROLES, else 400 naming `field`. */
export function roleIn(value: unknown, field = 'role'): Role {
  if (typeof value === 'string' && (ROLES as readonly string[]).includes(value))
    return value as Role;
  throw invalidInput([{ field, message: `must be one of ${ROLES.join(', ')}` }]);
}

/** An email named by a client, trimmed, else 400 naming `email`. */
export function emailIn(value: unknown): string {
  const email = typeof value === 'string' ? value.trim() : '';
  if (!EMAIL.test(email) || email.length > 254)
    throw invalidInput([{ field: 'email', message: 'not an email address' }]);
  return email;
}

export const lastOwner = () =>
  new ApiError(
    'LAST_OWNER',
    'An account always has an owner: make another member owner first, then try again.',
  );

export const notMember = (userId: string) =>
  new ApiError('NOT_FOUND', `No member ${userId} in this account.`);

/** Which account (the operator names one) and where the request came from (the audit log). */
export interface On {
  account?: string;
  src?: AuditSource;
}
