// The TOTP second factor of a person (docs/studio.md "Two-factor"): turning it on (a secret shown
// as a QR code and text, confirmed by a first code, then ten recovery codes shown once), turning
// it off (with a code), a code checked once, and an owner's requirement of it for their account.
// Every change of a factor is audited in each account the person is a member of, in the change's
// transaction. The secret is never logged nor put in an event.
import { transaction, type Db, type Queryable } from '../db/pool.ts';
import { NO_SOURCE, recordAudit, type AuditSource } from '../audit/record.ts';
import type { AuditAction } from '../audit/actions.ts';
import { accountsOfPerson } from '../db/memberships.ts';
import { personById } from '../db/people.ts';
import {
  disableFactor,
  enableFactor,
  factorOf,
  recoveryCodesLeft,
  replaceRecoveryCodes,
  setPendingSecret,
  setTwoFactorRequired,
  twoFactorRequired,
  useRecoveryCode,
  useStep,
} from '../db/second-factor.ts';
import { authorize } from '../domain/authorize.ts';
import { memberPrincipal, type Principal } from '../domain/principal.ts';
import { codeStep, enrolment, newRecoveryCodes, newSecret, recoveryHash } from './totp.ts';

/** How a code was accepted, or why not. */
export type CodeUse = 'totp' | 'recovery_code' | null;

/**
 * Uses `code` of the person once: a TOTP code of a step later than any used (±1 step of now), or
 * an unused recovery code however typed. Through `q`, so a caller's transaction can hold the use
 * together with what it opens.
 */
export async function useCode(q: Queryable, personId: string, code: string): Promise<CodeUse> {
  const factor = await factorOf(q, personId);
  if (!factor?.secret) return null;
  const step = codeStep(factor.secret, code);
  if (step !== null) return (await useStep(q, personId, step)) ? 'totp' : null;
  const hash = recoveryHash(code);
  if (hash && (await useRecoveryCode(q, personId, hash))) return 'recovery_code';
  return null;
}

/** An event of the person's own, in every account they are a member of. */
async function auditEverywhere(
  tx: Queryable,
  personId: string,
  action: AuditAction,
  src: AuditSource,
  details: Record<string, unknown> = {},
) {
  for (const a of await accountsOfPerson(tx, personId))
    await recordAudit(tx, {
      account: a.id,
      action,
      actor: memberPrincipal(a.id, personId, a.role),
      ...src,
      target: { type: 'member', id: personId },
      details,
    });
}

export class SecondFactor {
  constructor(private db: Db) {}

  /**
   * Whether the person has it on, how many recovery codes they have left, and whether the account
   * requires it.
   */
  async status(personId: string, accountId: string) {
    const f = await factorOf(this.db, personId);
    const enabled = !!f?.secret;
    return {
      enabled,
      recoveryLeft: enabled ? await recoveryCodesLeft(this.db, personId) : 0,
      required: await twoFactorRequired(this.db, accountId),
    };
  }

  /** The secret waiting to be confirmed, shown again (a wrong first code); null when none. */
  async pending(personId: string) {
    const f = await factorOf(this.db, personId);
    if (!f?.pending || f.secret) return null;
    return enrolment(f.pending, (await personById(this.db, personId))?.email ?? 'Rendergate');
  }

  /** A new secret to confirm (replacing one shown before), as a QR code and base32 text. */
  async start(personId: string) {
    const person = await personById(this.db, personId);
    const secret = newSecret();
    await setPendingSecret(this.db, personId, secret);
    return enrolment(secret, person?.email ?? 'Rendergate');
  }

  /**
   * Confirms the pending secret with a code of it: two-factor is on and the ten recovery codes
   * (returned once, stored hashed) replace any earlier ones, together. Null: a wrong code, or no
   * secret pending (turned on already).
   */
  async confirm(personId: string, code: string, src: AuditSource = NO_SOURCE) {
    const f = await factorOf(this.db, personId);
    if (!f?.pending || f.secret) return null;
    const step = codeStep(f.pending, code);
    if (step === null) return null;
    const codes = newRecoveryCodes();
    const done = await transaction(this.db, async (tx) => {
      if (!(await enableFactor(tx, personId, f.pending!, step))) return false;
      await replaceRecoveryCodes(
        tx,
        personId,
        codes.map((c) => recoveryHash(c)!),
      );
      await auditEverywhere(tx, personId, 'two_factor.enabled', src, {
        scope: 'person',
        method: 'totp',
      });
      return true;
    });
    return done ? codes : null;
  }

  /** Turns it off, given a right code (TOTP or recovery, used up by this); false if not. */
  async disable(personId: string, code: string, src: AuditSource = NO_SOURCE): Promise<boolean> {
    return transaction(this.db, async (tx) => {
      const used = await useCode(tx, personId, code);
      if (!used) return false;
      await disableFactor(tx, personId);
      await auditEverywhere(tx, personId, 'two_factor.disabled', src, {
        scope: 'person',
        with: used,
      });
      return true;
    });
  }

  /** An owner's "Require two-factor" for their account (audited when it changes). */
  async require(p: Principal, accountId: string, required: boolean, src: AuditSource) {
    authorize(p, 'account.requireTwoFactor');
    await transaction(this.db, async (tx) => {
      if (await setTwoFactorRequired(tx, accountId, required))
        await recordAudit(tx, {
          account: accountId,
          // the contract's list is closed: the account's requirement is the same two actions,
          // told apart from a person's own by their target (the account) and `scope`
          action: required ? 'two_factor.enabled' : 'two_factor.disabled',
          actor: p,
          ...src,
          target: { type: 'account', id: accountId },
          details: { scope: 'account', required },
        });
    });
  }
}
