// Following an invite's link (docs/api.md "Teams: members and roles"): a new person sets a
// password, a known one signs in with theirs; either becomes a member with the invite's role. The
// link works once (used in the statement that checks it), within 7 days, unless a newer invite or a
// revocation voided it. Nothing is half-written: the person, the membership, the used link and the
// audit event commit together.
import crypto from 'node:crypto';
import { transaction, type Db } from '../db/pool.ts';
import { liveInvite, useInvite } from '../db/member-invites.ts';
import { personByEmail, personFor, setLastAccount } from '../db/people.ts';
import { passwordOf, upsertPassword } from '../db/studio-passwords.ts';
import { newId } from '../domain/ids.ts';
import { memberPrincipal, type Role } from '../domain/principal.ts';
import { NO_SOURCE, recordAudit, type AuditSource } from '../audit/record.ts';
import { joinAccount } from './members.ts';
import type { PasswordWork } from './passwords.ts';

const sha = (s: string) => crypto.createHash('sha256').update(s).digest();

export interface InviteView {
  accountLabel: string;
  email: string;
  role: Role;
  /** The invited email has a person with a password: they sign in rather than choose one. */
  known: boolean;
}

/** What a live link invites to, without using it; null when it is unknown, used, voided, expired. */
export async function peekInvite(db: Db, token: string): Promise<InviteView | null> {
  if (token.length > 100) return null;
  const i = await liveInvite(db, sha(token));
  if (!i) return null;
  const person = await personByEmail(db, i.email);
  return {
    accountLabel: i.account_label,
    email: i.email,
    role: i.role,
    known: person?.has_password ?? false,
  };
}

export type Joined =
  { ok: true; personId: string; accountId: string } | { ok: false; why: 'gone' | 'password' };

/**
 * Joins through the link: a known person's `password` is checked, a new person's set. `gone`: the
 * link is not live (used twice, expired, voided); `password`: a known person's is wrong.
 */
export async function joinWithInvite(
  db: Db,
  work: PasswordWork,
  token: string,
  password: string,
  src: AuditSource = NO_SOURCE,
): Promise<Joined> {
  const seen = await peekInvite(db, token);
  if (!seen) return { ok: false, why: 'gone' };
  const known = seen.known ? await personByEmail(db, seen.email) : null;
  let hash: string | null = null;
  if (known) {
    const digest = await passwordOf(db, known.id);
    if (!digest || !(await work.verify(digest, password))) return { ok: false, why: 'password' };
  } else {
    hash = await work.hash(password);
  }
  return transaction(db, async (tx): Promise<Joined> => {
    const invite = await useInvite(tx, sha(token));
    if (!invite) return { ok: false, why: 'gone' };
    const person = known ?? (await personFor(tx, newId('usr'), invite.email));
    // A person made meanwhile (another invite, a sign-up) with a password keeps theirs.
    if (hash !== null) {
      if (!known && person.has_password) return { ok: false, why: 'gone' };
      await upsertPassword(tx, person.id, hash);
    }
    const added = await joinAccount(tx, invite.account_id, person.id, invite.role);
    await setLastAccount(tx, person.id, invite.account_id);
    if (added)
      await recordAudit(tx, {
        ...src,
        account: invite.account_id,
        action: 'member.joined',
        actor: memberPrincipal(invite.account_id, person.id, invite.role),
        hints: { email: person.email },
        target: { type: 'member', id: person.id },
        details: { email: person.email, role: invite.role },
      });
    return { ok: true, personId: person.id, accountId: invite.account_id };
  });
}
