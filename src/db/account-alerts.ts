// The statements on `account_alerts` (migrations/036): the outbox of alerts the ledger writes in
// the change's transaction (src/ledger/sql/account_alert.sql) and the worker mails and audits
// (services/alert-notices.ts), at least once: a claim leases one row, its end marks it done.
import type { Queryable } from './pool.ts';

export interface ClaimedAlert {
  id: string;
  account_id: string;
  kind: 'account.balance_low' | 'budget.threshold_reached';
  data: Record<string, unknown>;
}

/**
 * Leases up to `max` alerts not done and not leased (a lease lapsed: its worker died), oldest
 * first; SKIP LOCKED leaves those another worker is claiming to it.
 */
export async function claimAlerts(
  q: Queryable,
  max: number,
  leaseSeconds: number,
): Promise<ClaimedAlert[]> {
  const { rows } = await q.query<ClaimedAlert>({
    name: 'alerts-claim',
    text: `UPDATE account_alerts a SET lease_until = now() + make_interval(secs => $2)
      WHERE a.id IN (SELECT id FROM account_alerts WHERE done_at IS NULL
                       AND (lease_until IS NULL OR lease_until < now())
                     ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING a.id, a.account_id, a.kind, a.data`,
    values: [max, leaseSeconds],
  });
  return rows;
}

/** Marks the alert done; false when it was already (another worker, its lease lapsed, did it). */
export async function finishAlert(q: Queryable, id: string): Promise<boolean> {
  const r = await q.query(
    'UPDATE account_alerts SET done_at = now() WHERE id = $1 AND done_at IS NULL',
    [id],
  );
  return r.rowCount === 1;
}
