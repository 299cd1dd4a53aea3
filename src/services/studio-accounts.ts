// What the studio's pages do with accounts, passwords, one-time links and the attempt limits, bound
// to the database here so that the studio never touches it (passwords.ts, one-time-links.ts,
// invites.ts, admission/attempts.ts hold the rules).
import { transaction, type Db } from '../db/pool.ts';
import { recordAudit } from '../audit/record.ts';
import { searchAccounts } from '../db/accounts.ts';
import { accountsOfPerson } from '../db/memberships.ts';
import { personById, personByEmail } from '../db/people.ts';
import { accountToOpen } from '../db/studio-passwords.ts';
import { inviteLink, resetLink } from './invites.ts';
import { issueToken, linkFor, peekToken, type Purpose } from './one-time-links.ts';
import {
  checkPassword,
  currentPasswordOk,
  setPassword,
  setPasswordWithLink,
  signUp,
  spendVerification,
  PasswordsBusy,
  type PasswordWork,
} from './passwords.ts';
import { joinWithInvite, peekInvite } from './members-join.ts';
import type { AuditSource } from '../audit/record.ts';
import {
  attempt,
  RefusedScopes,
  signInAttempt,
  succeeded,
  type Door,
} from '../admission/attempts.ts';
import { authorize } from '../domain/authorize.ts';
import type { Principal } from '../domain/principal.ts';

export class StudioAccounts {
  /** Scopes the database refused, refused again in this process without asking it. */
  private refused = new RefusedScopes();

  constructor(
    private db: Db,
    private publicUrl: string,
    /** Argon2's hashes and checks, a few at once (passwords.ts). */
    private work: PasswordWork,
    /** The operator's credit for each self sign-up (RENDERGATE_SIGNUP_CREDIT_CENTS). */
    private signupCreditCents = 0,
  ) {}

  /** Counts an attempt at a door before it is checked, or refuses it (admission/attempts.ts). */
  attempt(door: Door) {
    return attempt(this.db, door, this.refused);
  }

  /** A password sign-in's attempt, let in past the email's ceiling (admission/attempts.ts). */
  signInAttempt(ip: string, email: string) {
    return signInAttempt(this.db, ip, email, this.refused);
  }

  /** The attempt was right (password, token): it does not count. */
  succeeded(door: Door) {
    return succeeded(this.db, door, this.refused);
  }

  /**
   * `work` (a password check or hash) for attempts already counted at `doors`. When the process is
   * too busy to run it (PasswordsBusy, a 503), nothing was checked: the attempts are given back before
   * the 503 goes out, so a person who meets a busy moment keeps their tries.
   */
  async givenBackIfBusy<T>(doors: Door[], work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (e) {
      if (e instanceof PasswordsBusy) for (const d of doors) await this.succeeded(d);
      throw e;
    }
  }

  checkPassword(email: string, password: string) {
    return checkPassword(this.db, this.work, email, password);
  }

  currentPasswordOk(personId: string, password: string) {
    return currentPasswordOk(this.db, this.work, personId, password);
  }

  setPassword(personId: string, password: string, src?: AuditSource) {
    return setPassword(this.db, this.work, personId, password, src);
  }

  /**
   * A wrong password (or second-factor code) for the email of a person: `session.sign_in_failed`
   * in the log of each account they are a member of (an unknown email has no log to write to, and
   * is not recorded).
   */
  async signInFailed(
    email: string,
    src: AuditSource,
    reason: 'password' | 'code' = 'password',
  ): Promise<void> {
    const person = await personByEmail(this.db, email);
    if (!person) return;
    await transaction(this.db, async (tx) => {
      for (const a of await accountsOfPerson(tx, person.id))
        await recordAudit(tx, {
          account: a.id,
          action: 'session.sign_in_failed',
          actor: { type: 'member', id: person.id, email: person.email },
          ...src,
          details: { email, reason },
        });
    });
  }

  signUp(email: string, password: string) {
    return signUp(this.db, this.work, email, password, this.signupCreditCents);
  }

  /** One check that checks nothing, for answers that must take a check's time (passwords.ts). */
  spendVerification(password: string) {
    return spendVerification(this.work, password);
  }

  /** The account and person's email of a live, unused link (without using it); null if not live. */
  async peekLink(
    token: string,
    purpose: Purpose,
  ): Promise<{ accountId: string; email: string | null } | null> {
    const owner = await peekToken(this.db, token, purpose);
    if (!owner) return null;
    const email = (await personById(this.db, owner.personId))?.email ?? null;
    return { accountId: owner.accountId, email };
  }

  /** Sets the password through a link (passwords.ts setPasswordWithLink); the account, or null. */
  setPasswordWithLink(token: string, purpose: Purpose, password: string, src?: AuditSource) {
    return setPasswordWithLink(this.db, this.work, token, purpose, password, src);
  }

  /**
   * A reset link for the person of `email`, with their address; null when no person has it (or
   * they are a member of no account: there is nothing to sign in to).
   */
  async resetLinkFor(email: string): Promise<{ email: string; link: string } | null> {
    const person = await personByEmail(this.db, email);
    const accountId = person && (await accountToOpen(this.db, person.id));
    if (!person || !accountId) return null;
    const token = await issueToken(this.db, accountId, 'reset', undefined, person.id);
    return { email: person.email, link: linkFor(this.publicUrl, 'reset', token) };
  }

  /** What a member invite's link invites to (members-join.ts); null when it is not live. */
  peekInvite(token: string) {
    return peekInvite(this.db, token);
  }

  /** Joins an account through a member invite's link (members-join.ts). */
  joinWithInvite(token: string, password: string, src: AuditSource) {
    return joinWithInvite(this.db, this.work, token, password, src);
  }

  /** The operator's invitation (invites.ts). */
  async invite(p: Principal, email: string, name: string | null) {
    authorize(p, 'accounts.administer');
    return inviteLink(this.db, this.publicUrl, email, name);
  }

  /** The operator's reset link (invites.ts). */
  async resetLink(p: Principal, email: string) {
    authorize(p, 'accounts.administer');
    return resetLink(this.db, this.publicUrl, email);
  }

  /** The operator's account search. */
  async search(p: Principal, text: string) {
    authorize(p, 'accounts.administer');
    return searchAccounts(this.db, text);
  }
}
