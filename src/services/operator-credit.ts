// The operator's credit (admin API, console, command line): the ledger's credit and its
// `credit.added` audit event in one transaction, so the log has every credit that happened and
// none that did not.
import { recordAudit, NO_SOURCE, type AuditSource } from '../audit/record.ts';
import { transaction, type Db } from '../db/pool.ts';
import type { Principal } from '../domain/principal.ts';
import { creditIn, type Credited } from '../ledger/ledger.ts';

export function addCredit(
  db: Db,
  accountId: string,
  amountCents: number,
  reason: string | null,
  audit: { by: Principal; src?: AuditSource },
): Promise<Credited> {
  return transaction(db, async (tx) => {
    const c = await creditIn(tx, { accountId, amountCents, reason });
    await recordAudit(tx, {
      account: accountId,
      action: 'credit.added',
      actor: audit.by,
      target: { type: 'ledger_entry', id: c.entryId },
      ...(audit.src ?? NO_SOURCE),
      details: { amountCents, reason, via: 'operator', balanceCents: c.balanceCents },
    });
    return c;
  });
}
