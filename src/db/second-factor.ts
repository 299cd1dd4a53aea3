// The statements on a person's second factor (migrations/035): the TOTP secret, the last step
// accepted, the recovery codes (SHA-256 only), and an account's requirement of it. Every use of a
// code is one guarded statement, so two requests with the same code cannot both pass.
import type { Queryable } from './pool.ts';

export interface FactorRow {
  secret: string | null;
  pending: string | null;
}

/** The person's TOTP secret (null: not turned on) and the one waiting to be confirmed. */
export async function factorOf(q: Queryable, personId: string): Promise<FactorRow | null> {
  const { rows } = await q.query<FactorRow>(
    'SELECT totp_secret AS secret, totp_pending_secret AS pending FROM people WHERE id = $1',
    [personId],
  );
  return rows[0] ?? null;
}

/** The secret shown while the person turns two-factor on, replacing any earlier one. */
export async function setPendingSecret(q: Queryable, personId: string, secret: string) {
  await q.query('UPDATE people SET totp_pending_secret = $2 WHERE id = $1', [personId, secret]);
}

/**
 * Turns the pending secret on, with `step` as the step already used; false when it is no longer
 * the pending one (turned on meanwhile, or replaced by a newer one).
 */
export async function enableFactor(
  q: Queryable,
  personId: string,
  secret: string,
  step: number,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE people SET totp_secret = totp_pending_secret, totp_pending_secret = NULL,
            totp_enabled_at = now(), totp_last_step = $3
      WHERE id = $1 AND totp_pending_secret = $2 AND totp_secret IS NULL`,
    [personId, secret, step],
  );
  return rowCount === 1;
}

/** Turns it off: secret, last step and recovery codes gone. */
export async function disableFactor(q: Queryable, personId: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE people SET totp_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL,
            totp_pending_secret = NULL
      WHERE id = $1 AND totp_secret IS NOT NULL`,
    [personId],
  );
  await q.query('DELETE FROM recovery_codes WHERE person_id = $1', [personId]);
  return rowCount === 1;
}

/**
 * Accepts the TOTP code of `step` for the person: true once, when `step` is later than every step
 * accepted before (a code replayed, or an older one, changes nothing and answers false).
 */
export async function useStep(q: Queryable, personId: string, step: number): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE people SET totp_last_step = $2
      WHERE id = $1 AND totp_secret IS NOT NULL
        AND (totp_last_step IS NULL OR totp_last_step < $2)`,
    [personId, step],
  );
  return rowCount === 1;
}

/** Replaces the person's recovery codes with these hashes. */
export async function replaceRecoveryCodes(q: Queryable, personId: string, hashes: Buffer[]) {
  await q.query('DELETE FROM recovery_codes WHERE person_id = $1', [personId]);
  await q.query(
    `INSERT INTO recovery_codes (person_id, code_hash) SELECT $1, h FROM unnest($2::bytea[]) h`,
    [personId, hashes],
  );
}

/** Uses an unused recovery code of the person: true once per code. */
export async function useRecoveryCode(
  q: Queryable,
  personId: string,
  hash: Buffer,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE recovery_codes SET used_at = now()
      WHERE person_id = $1 AND code_hash = $2 AND used_at IS NULL`,
    [personId, hash],
  );
  return rowCount === 1;
}

export async function recoveryCodesLeft(q: Queryable, personId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM recovery_codes WHERE person_id = $1 AND used_at IS NULL',
    [personId],
  );
  return rows[0].n;
}

/** Whether the account requires its members to have a second factor. */
export async function twoFactorRequired(q: Queryable, accountId: string): Promise<boolean> {
  const { rows } = await q.query<{ r: boolean }>(
    'SELECT two_factor_required AS r FROM accounts WHERE id = $1',
    [accountId],
  );
  return rows[0]?.r ?? false;
}

/** Sets the requirement; false when it already was so. */
export async function setTwoFactorRequired(
  q: Queryable,
  accountId: string,
  required: boolean,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE accounts SET two_factor_required = $2
      WHERE id = $1 AND two_factor_required IS DISTINCT FROM $2`,
    [accountId, required],
  );
  return rowCount === 1;
}
