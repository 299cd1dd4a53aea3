// The steps of a password sign-in after the password (docs/studio.md "Signing in"): the code
// of a person with a second factor, and the one-time link mailed past the per-email ceiling of
// wrong passwords. A right password opens a challenge (its id in a cookie, the table keeping its
// SHA-256); the challenge and the code are used together, once, in one transaction, so a code
// or a challenge replayed opens nothing, and a wrong code changes nothing.
import crypto from 'node:crypto';
import { transaction, type Db } from '../db/pool.ts';
import { personById } from '../db/people.ts';
import { accountToOpen } from '../db/studio-passwords.ts';
import { factorOf } from '../db/second-factor.ts';
import { insertChallenge, liveChallenge, useChallenge } from '../db/sign-in-flows.ts';
import { issueToken, linkFor, useToken } from './one-time-links.ts';
import { useCode } from './second-factor.ts';
import type { SignedIn } from './passwords.ts';

/** A challenge waits this long for its code. */
export const CHALLENGE_TTL_S = 5 * 60;

const sha = (s: string) => crypto.createHash('sha256').update(s).digest();
const ok = (id: string | undefined): id is string => !!id && id.length <= 100;

/** What answering a challenge came to. */
export type Answered =
  ({ ok: true; via: string; next: string } & SignedIn) | { ok: false; why: 'gone' | 'code' };

export class SignInSteps {
  constructor(
    private db: Db,
    private publicUrl: string,
  ) {}

  async hasFactor(personId: string): Promise<boolean> {
    return !!(await factorOf(this.db, personId))?.secret;
  }

  /** A challenge for the person's code; the id for the cookie (and nowhere else). */
  async challenge(personId: string, via: string, next: string): Promise<string> {
    const id = crypto.randomBytes(32).toString('base64url');
    await insertChallenge(this.db, sha(id), personId, via, next, CHALLENGE_TTL_S);
    return id;
  }

  /** The person and email of a live challenge, without using it. */
  async peek(id: string | undefined): Promise<{ personId: string; email: string } | null> {
    if (!ok(id)) return null;
    const c = await liveChallenge(this.db, sha(id));
    const person = c && (await personById(this.db, c.person_id));
    return person ? { personId: person.id, email: person.email } : null;
  }

  /**
   * Answers the challenge with `code`: on a right one, the challenge and the code are used up
   * together and the sign-in goes on; on a wrong one nothing is used.
   */
  async answer(id: string | undefined, code: string): Promise<Answered> {
    if (!ok(id)) return { ok: false, why: 'gone' };
    const wrong = new Error('wrong code');
    try {
      return await transaction(this.db, async (tx): Promise<Answered> => {
        const c = await useChallenge(tx, sha(id));
        if (!c) return { ok: false, why: 'gone' };
        const used = await useCode(tx, c.person_id, code);
        if (!used) throw wrong; // rolls the challenge's use back: it may be answered again
        return {
          ok: true,
          via: `${c.via}+${used}`,
          next: c.next_path,
          personId: c.person_id,
          accountId: await accountToOpen(tx, c.person_id),
        };
      });
    } catch (e) {
      if (e === wrong) return { ok: false, why: 'code' };
      throw e;
    }
  }

  /** A one-time sign-in link for the person (voiding their earlier links), to be mailed. */
  async signInLink(personId: string, accountId: string): Promise<string> {
    const token = await issueToken(this.db, accountId, 'signin', undefined, personId);
    return linkFor(this.publicUrl, 'signin', token);
  }

  /** Uses a sign-in link, once: who it signs in, or null when it is not live. */
  async useSignInLink(token: string): Promise<SignedIn | null> {
    const owner = await useToken(this.db, token, 'signin');
    if (!owner) return null;
    return { personId: owner.personId, accountId: await accountToOpen(this.db, owner.personId) };
  }
}
