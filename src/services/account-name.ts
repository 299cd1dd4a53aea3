// Renaming an account (docs/studio.md "Account"): the owner's alone (domain/authorize.ts
// `account.rename`). The name is what the account switcher and the operator's lists show; the new
// name and the `account.renamed` event commit together, so the log never misses a rename nor
// records one that did not happen.
import { transaction, type Db } from '../db/pool.ts';
import { renameAccount } from '../db/accounts.ts';
import { recordAudit, type AuditSource } from '../audit/record.ts';
import { ApiError, invalidInput } from '../domain/errors.ts';
import { accountFor } from '../domain/authorize.ts';
import type { Principal } from '../domain/principal.ts';

export const MAX_ACCOUNT_NAME = 100;

/**
 * The name as stored: trimmed, null when empty (the account then goes by its email); throws 400
 * INVALID_INPUT for one too long or holding control characters (a line break in a list's label).
 */
export function accountName(raw: string): string | null {
  const name = raw.trim();
  if (name.length > MAX_ACCOUNT_NAME)
    throw invalidInput([
      {
        field: 'name',
        message: `at most ${MAX_ACCOUNT_NAME} characters (this has ${name.length})`,
      },
    ]);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name))
    throw invalidInput([{ field: 'name', message: 'no line breaks or control characters' }]);
  return name === '' ? null : name;
}

/** Renames the principal's account (the operator's: the one named); the name it now has. */
export async function renameOwnAccount(
  db: Db,
  p: Principal,
  raw: string,
  src: AuditSource,
  named?: string,
): Promise<string | null> {
  const account = accountFor(p, 'account.rename', named);
  const name = accountName(raw);
  await transaction(db, async (tx) => {
    const was = await renameAccount(tx, account, name);
    if (!was) throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${account}.`);
    if (was.before === name) return; // nothing changed: nothing to record
    await recordAudit(tx, {
      account,
      action: 'account.renamed',
      actor: p,
      target: { type: 'account', id: account },
      ...src,
      details: { from: was.before, to: name },
    });
  });
  return name;
}
