// Passwords: argon2id (OWASP's minimum parameters: 19 MiB, 2 passes, 1 lane), one hash per person.
// Sign-in answers the same whatever is wrong (unknown email, no password set, wrong password) and takes
// the same time: an unknown email is checked against a dummy hash. Every hash and check goes through
// PasswordWork, which runs a few at once per process.
import { hash, type Algorithm } from '@node-rs/argon2';
import pLimit, { type LimitFunction } from 'p-limit';
import { Piscina } from 'piscina';
import { ApiError } from '../domain/errors.ts';
import { transaction, type Db, type Tx } from '../db/pool.ts';
import { NO_SOURCE, recordAudit, type AuditSource } from '../audit/record.ts';
import { memberPrincipal, SYSTEM } from '../domain/principal.ts';
import { creditIn } from '../ledger/ledger.ts';
import { insertAccount } from '../db/accounts.ts';
import { passwordOf, passwordOfEmail, upsertPassword } from '../db/studio-passwords.ts';
import { personByEmail } from '../db/people.ts';
import { accountsOfPerson, ownerOf } from '../db/memberships.ts';
import { revokeSessionsOfPerson } from '../db/studio-sessions.ts';
import type { TokenOwner } from '../db/studio-tokens.ts';
import { useToken, voidLinks, type Purpose } from './one-time-links.ts';
import { newId } from '../domain/ids.ts';

const OPTIONS = {
  algorithm: 2 as Algorithm /* Argon2id */,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
};
export const MIN_PASSWORD = 10;
export const MAX_PASSWORD = 200;
const DUMMY = hash('not a password of anyone', OPTIONS);

/**
 * The nice value of the password threads (password-worker.mjs): where the cores are contended, 10 gets
 * such a thread about a tenth of the share of a thread at the default 0, never none.
 */
export const PASSWORD_THREAD_NICE = 10;

/** Checks and hashes waiting for their turn, at most, past which one is refused with 503. */
export const MAX_WAITING = 100;

/** The 503 of a password check or hash refused past MAX_WAITING: nothing was checked or hashed. */
export class PasswordsBusy extends ApiError {
  constructor() {
    super(
      'SERVICE_UNAVAILABLE',
      'Too many passwords are being checked at once; try again in a few seconds.',
      undefined,
      { 'retry-after': '2' },
    );
  }
}

/**
 * Argon2 work, `atOnce` at a time in this process (RENDERGATE_PASSWORD_CHECKS_AT_ONCE): each check is
 * about 12 ms of a core and 19 MiB, so a burst of sign-ins from many addresses (each within its own
 * throttle) would otherwise take every core from the API's requests and the database at once. The rest
 * wait their turn, in order; past MAX_WAITING waiting, 503 SERVICE_UNAVAILABLE with Retry-After, since
 * a turn that far off would come after the client gave up. The work runs on threads of its own at a
 * lower CPU priority (password-worker.mjs), made on first use and ended after a minute idle: where the
 * cores are contended, the sign-ins wait, not the API and the database.
 */
export class PasswordWork {
  private limit: LimitFunction;
  private pool: Piscina | null = null;

  constructor(
    private atOnce: number,
    private maxWaiting = MAX_WAITING,
  ) {
    this.limit = pLimit(atOnce);
  }

  private threads(): Piscina {
    this.pool ??= new Piscina({
      filename: new URL('./password-worker.mjs', import.meta.url).href,
      minThreads: 0,
      maxThreads: this.atOnce,
      idleTimeout: 60_000,
      workerData: { nice: PASSWORD_THREAD_NICE },
    });
    return this.pool;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.limit.pendingCount >= this.maxWaiting) return Promise.reject(new PasswordsBusy());
    return this.limit(work);
  }

  hash(password: string): Promise<string> {
    return this.run(() => this.threads().run({ op: 'hash', password, options: OPTIONS }));
  }

  /** Whether `password` matches `digest` (false for a digest that is not argon2's). */
  verify(digest: string, password: string): Promise<boolean> {
    const task = { op: 'verify', digest, password: password.slice(0, MAX_PASSWORD) };
    return this.run(() => this.threads().run(task) as Promise<boolean>);
  }

  /** Ends its threads (graceful shutdown, tests); work after it starts them again. */
  async close(): Promise<void> {
    const p = this.pool;
    this.pool = null;
    await p?.destroy();
  }

  /** Checks and hashes running now, and waiting. */
  get active(): number {
    return this.limit.activeCount;
  }

  get waiting(): number {
    return this.limit.pendingCount;
  }
}

/** Why a new password is refused, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD) return `Use at least ${MIN_PASSWORD} characters.`;
  if (password.length > MAX_PASSWORD) return `Use at most ${MAX_PASSWORD} characters.`;
  return null;
}

export const EMAIL = /^[^\s@<>"]{1,64}@[^\s@<>"]{1,190}\.[^\s@<>".]{1,63}$/;

/** Who signs in: the person, and the account their sign-in opens (null: a member of none). */
export interface SignedIn {
  personId: string;
  accountId: string | null;
}

/** The person of this email and password, or null; always costs one argon2 verification. */
export async function checkPassword(
  db: Db,
  work: PasswordWork,
  email: string,
  password: string,
): Promise<SignedIn | null> {
  const r = await passwordOfEmail(db, email);
  const ok = await work.verify(r?.password_hash ?? (await DUMMY), password);
  return r && ok ? { personId: r.id, accountId: r.account_id } : null;
}

/** A new password; every unused link of the person is voided with it. */
export async function setPassword(
  db: Db,
  work: PasswordWork,
  personId: string,
  password: string,
  src: AuditSource = NO_SOURCE,
): Promise<void> {
  const h = await work.hash(password);
  await transaction(db, async (tx) => {
    await upsertPassword(tx, personId, h);
    await voidLinks(tx, personId);
    await passwordChanged(tx, personId, 'account', src);
  });
}

/**
 * The `password.changed` event, by the person themselves (`via`: the page or the link used), in
 * the log of every account they are a member of: a password opens all of them.
 */
async function passwordChanged(tx: Tx, personId: string, via: string, src: AuditSource) {
  for (const a of await accountsOfPerson(tx, personId))
    await recordAudit(tx, {
      account: a.id,
      action: 'password.changed',
      actor: memberPrincipal(a.id, personId, a.role),
      ...src,
      details: { via },
    });
}

/** One argon2 verification that checks nothing: answers that must not differ in time spend it too. */
export async function spendVerification(work: PasswordWork, password: string): Promise<void> {
  // only its time matters: refused by a full queue, it is skipped, never failing the answer it pads
  await work.verify(await DUMMY, password).catch(() => false);
}

/**
 * Self sign-up: a new person with their password and an account they own (the accounts table's
 * trigger makes the person its owner), or null when the email is taken, by an account or a person.
 */
export async function signUp(
  db: Db,
  work: PasswordWork,
  email: string,
  password: string,
  signupCreditCents = 0,
): Promise<SignedIn | null> {
  const h = await work.hash(password);
  return transaction(db, async (tx) => {
    if (await personByEmail(tx, email)) return null;
    const account = await insertAccount(tx, newId('acct'), email, null);
    if (!account) return null;
    const personId = (await ownerOf(tx, account.id))!;
    await upsertPassword(tx, personId, h);
    // The operator's sign-up credit (RENDERGATE_SIGNUP_CREDIT_CENTS), in the account's own
    // transaction: only a sign-up the per-address bound let through is made, and credited.
    if (signupCreditCents > 0) await signupCredit(tx, account.id, signupCreditCents);
    return { personId, accountId: account.id };
  });
}

async function signupCredit(tx: Tx, accountId: string, amountCents: number) {
  const c = await creditIn(tx, { accountId, amountCents, reason: 'Sign-up credit' });
  await recordAudit(tx, {
    account: accountId,
    action: 'credit.added',
    actor: SYSTEM,
    target: { type: 'ledger_entry', id: c.entryId },
    details: { amountCents, via: 'signup' },
  });
}

export async function currentPasswordOk(
  db: Db,
  work: PasswordWork,
  personId: string,
  password: string,
): Promise<boolean> {
  return work.verify((await passwordOf(db, personId)) ?? (await DUMMY), password);
}

/**
 * Uses a one-time link to set its person's password: the password set, the link spent and every
 * session of the person ended, in one transaction. Whose link it was, or null when it is not live.
 */
export async function setPasswordWithLink(
  db: Db,
  work: PasswordWork,
  token: string,
  purpose: Purpose,
  password: string,
  src: AuditSource = NO_SOURCE,
): Promise<TokenOwner | null> {
  const h = await work.hash(password);
  return transaction(db, async (tx) => {
    const owner = await useToken(tx, token, purpose);
    if (owner) {
      await upsertPassword(tx, owner.personId, h);
      await revokeSessionsOfPerson(tx, owner.personId);
      await voidLinks(tx, owner.personId); // every other link of the person
      await passwordChanged(tx, owner.personId, purpose, src);
    }
    return owner;
  });
}
