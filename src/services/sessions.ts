// Studio sessions, stored server-side: the cookie holds 32 random bytes, the table only their
// SHA-256, so a leaked table gives no usable cookie. A session ends at sign-out (revoked_at,
// effective at once: every process drops the sessions it keeps in memory, services/
// session-cache.ts), after IDLE of inactivity, or ABSOLUTE after it was created, whichever is first.
// An account keeps at most `perAccount` live sessions (a new one ends the oldest). An operator
// console session (no account) is bound to the admin token it was opened with: a hash of the token
// is stored with it, and it opens the console only while the server's token has the same hash. A
// live session carries who acts (domain/principal.ts), made with its row: the operator for a console
// session, else a person (migrations/030) acting in one account with their role there, read with
// the session in the same statement.
import crypto from 'node:crypto';
import { transaction, type Db } from '../db/pool.ts';
import { recordAudit, type AuditSource } from '../audit/record.ts';
import {
  insertSession,
  liveSession,
  revokeSession,
  revokeSessionsBeyond,
  revokeSessionsOfPerson,
  switchSession,
  touchSession,
  type SessionRow,
} from '../db/studio-sessions.ts';
import { setLastAccount } from '../db/people.ts';
import { RefusedUntil } from '../admission/refused-until.ts';
import { memberPrincipal, OPERATOR, type Principal } from '../domain/principal.ts';
import type { SessionCache } from './session-cache.ts';

export const IDLE_MS = 2 * 60 * 60 * 1000; // 2 h without a request
export const ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000; // 7 days whatever the activity
/** last_seen_at is written at most this often per session: a page view is not a write. */
const TOUCH_MS = 60 * 1000;

const sha = (s: string) => crypto.createHash('sha256').update(s).digest();

export interface Session {
  /** Who acts in this session: the operator (a console session) or a member of the account. */
  principal: Principal;
  accountId: string | null;
  /** The signed-in person (null: the console). */
  personId: string | null;
  /** The person's email. */
  email: string | null;
  /** The person's accounts ({ id, label }) for the switcher, when they have more than one. */
  accounts: { id: string; label: string }[] | null;
  /** The account's name, null when it has none (it then goes by its email). */
  accountName: string | null;
  balanceCents: number;
  lastSeenAt: Date;
  /** The account requires a second factor the person has not turned on: only that page opens. */
  needsFactor: boolean;
}

/** Who acts in a session: the console's operator, or the person as a member of the account. */
const principalOf = (r: SessionRow): Principal =>
  r.account_id === null || r.person_id === null || r.role === null
    ? OPERATOR
    : memberPrincipal(r.account_id, r.person_id, r.role);

/** Whether a kept session is still within its idle limit and its end (the statement's own tests). */
function liveNow(r: SessionRow): boolean {
  const now = Date.now();
  return r.expires_at.getTime() > now && now - r.last_seen_at.getTime() < IDLE_MS;
}

/** What a console session is bound to: a hash of the admin token (never the token's plain SHA-256). */
export const consoleBinding = (adminToken: string) =>
  sha(`rendergate console session\n${adminToken}`);

export class Sessions {
  private console: Buffer;
  private perAccount: number;
  private touching = new Set<string>();
  /** Sessions refused by their account's per-minute limit, by id hash, until their window ends. */
  private spent = new RefusedUntil();

  constructor(
    private db: Db,
    o: { adminToken: string; perAccount: number },
    /** Live sessions kept in memory (none: every request reads its session). */
    private cache: SessionCache | null = null,
  ) {
    this.console = consoleBinding(o.adminToken);
    this.perAccount = o.perAccount;
  }

  /**
   * A new session of a person in an account (null: the operator's console); the returned id goes in
   * the cookie and nowhere else. `signIn`: it opens a sign-in (not the session a password change
   * renews), audited as `session.signed_in` in that account, `via` saying how (password, sign-up,
   * invite, reset, sso, link, with a second factor `+totp` or `+recovery_code`) and `details`
   * anything more (an SSO sign-in that made the person says so).
   */
  async create(
    who: { personId: string; accountId: string } | null,
    signIn?: AuditSource & { via: string; details?: Record<string, unknown> },
  ): Promise<string> {
    const id = crypto.randomBytes(32).toString('base64url');
    await transaction(this.db, async (tx) => {
      await insertSession(tx, sha(id), who, ABSOLUTE_MS / 1000, who === null ? this.console : null);
      // The oldest live sessions beyond the bound end (sessions of the console count together).
      await revokeSessionsBeyond(tx, who?.accountId ?? null, this.perAccount);
      if (who !== null && signIn) {
        const { via, details, ...src } = signIn;
        await recordAudit(tx, {
          account: who.accountId,
          action: 'session.signed_in',
          // the actor is the person (actorOf names a member by person); the role plays no part
          actor: memberPrincipal(who.accountId, who.personId, 'viewer'),
          ...src,
          details: { ...details, via },
        });
      }
    });
    return id;
  }

  /**
   * Moves session `id` to another account of its person, which their next sign-in opens; false
   * when they are not a member of it.
   */
  async switchTo(id: string, personId: string, accountId: string): Promise<boolean> {
    const idHash = sha(id);
    if (!(await switchSession(this.db, idHash, accountId))) return false;
    this.cache?.forgetSession(idHash.toString('base64'));
    await setLastAccount(this.db, personId, accountId);
    return true;
  }

  /**
   * Seconds left of the refusal noted for session `id` by spentUntil(), 0 when none: a session over its
   * per-minute limit is refused again without asking the database for it, until its window ends.
   */
  spentSeconds(id: string | undefined): number {
    if (!id || id.length > 100 || this.spent.size === 0) return 0;
    return Math.ceil(this.spent.left(sha(id).toString('base64')) / 1000);
  }

  /** Notes that session `id` was refused by its account's per-minute limit for `seconds`. */
  spentFor(id: string | undefined, seconds: number): void {
    if (id && id.length <= 100)
      this.spent.set(sha(id).toString('base64'), Date.now() + seconds * 1000);
  }

  /**
   * The live session of a cookie value, or null (unknown, revoked, idle too long, or past its end).
   * `fresh`: read from the database whatever this process keeps (a page that waited for a change
   * made elsewhere, such as the credit of Stripe's event, and shows its balance).
   */
  async find(
    id: string | undefined,
    kind: 'account' | 'admin',
    o: { fresh?: boolean } = {},
  ): Promise<Session | null> {
    if (o.fresh && id && id.length <= 100) this.cache?.forgetSession(sha(id).toString('base64'));
    return (
      await this.findWith(
        id,
        kind,
        async (idHash, idleSeconds) => ({
          row: await liveSession(this.db, idHash, idleSeconds),
          value: null,
        }),
        () => null,
      )
    ).session;
  }

  /**
   * find(), the session's row read by `read` (given the id's hash and the idle limit) along with
   * something else in the same statement: `value`, null unless the session is live and of `kind`.
   * A session kept in memory (services/session-cache.ts) is not read again: `alone` then reads the
   * value for it.
   */
  async findWith<T>(
    id: string | undefined,
    kind: 'account' | 'admin',
    read: (idHash: Buffer, idleSeconds: number) => Promise<{ row: SessionRow | null; value: T }>,
    alone: (s: Session) => T | Promise<T>,
  ): Promise<{ session: Session | null; value: T | null }> {
    const none = { session: null, value: null };
    if (!id || id.length > 100) return none;
    const idHash = sha(id);
    const key = idHash.toString('base64');
    const kept = this.cache?.get(key) ?? null;
    let r: SessionRow | null;
    let value: T | null = null;
    if (kept && liveNow(kept)) r = kept;
    else {
      const epoch = this.cache?.begin() ?? 0;
      ({ row: r, value } = await read(idHash, IDLE_MS / 1000));
      if (r) this.cache?.keep(key, r, epoch);
    }
    if (!r || (kind === 'admin') !== (r.account_id === null)) return none;
    if (kind === 'admin' && !(r.admin_token_hash && r.admin_token_hash.equals(this.console)))
      return none;
    if (Date.now() - r.last_seen_at.getTime() > TOUCH_MS) {
      await this.touch(idHash);
      // the kept row too, so that the next requests do not write it again
      r.last_seen_at = new Date();
    }
    const session = {
      principal: principalOf(r),
      accountId: r.account_id,
      personId: r.person_id,
      email: r.email,
      accounts: r.accounts?.map(([id, label]) => ({ id, label })) ?? null,
      accountName: r.account_name,
      balanceCents: r.balance_cents ?? 0,
      lastSeenAt: r.last_seen_at,
      needsFactor: r.needs_factor === true,
    };
    return { session, value: r === kept ? await alone(session) : value };
  }

  /**
   * One write of last_seen_at at a time per session in this process. A page's requests arrive together
   * (the page, then its assets, or a bench's 16 connections): each saw the same stale row, and each
   * writing it queued them all on the row's lock, about 20 ms apiece, once a minute. The others go on
   * without writing: the session is live either way, and the one write records the activity.
   */
  private async touch(idHash: Buffer): Promise<void> {
    const key = idHash.toString('base64');
    if (this.touching.has(key)) return;
    this.touching.add(key);
    try {
      await touchSession(this.db, idHash, TOUCH_MS / 2000);
    } finally {
      this.touching.delete(key);
    }
  }

  async revoke(id: string): Promise<void> {
    const idHash = sha(id);
    await revokeSession(this.db, idHash);
    this.cache?.forgetSession(idHash.toString('base64'));
  }

  /** "Sign out everywhere", and what a password change or reset does: every session of a person. */
  async revokeAll(personId: string): Promise<void> {
    await revokeSessionsOfPerson(this.db, personId);
    this.cache?.clear();
  }
}
