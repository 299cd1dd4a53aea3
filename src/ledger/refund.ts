// Refunds: a render's price given back (a queued render cancelled, failed or past its deadline; a
// succeeded one refunded by the operator). Each is one guarded statement on the generation, then the
// balance, the key's day and the 'refund' entry, in the caller's transaction: the generation row
// first, then the account, then the day row, the order a create batch takes the last two in. The
// statement moves the generation to a final refunded status, once (the guard: the status it leaves,
// or the attempt's lease).
// A test render was never charged: its refund takes back only its key's day (its test record).
import type { Tx } from '../db/pool.ts';
import { leaseGuard, type Lease } from '../db/lease.ts';
import { newId } from '../domain/ids.ts';
import type { RenderFailureCode } from '../domain/render-failures.ts';
import { returnToBalance } from './balance.ts';
import { insertEntry } from './entries.ts';
import { takeBackFromDay } from './spend.ts';

export interface RefundReason {
  status: 'failed' | 'refunded';
  code: RenderFailureCode;
  message: string;
}

/** What a refunding statement returns: whose charge, on which day of which key, and what to return. */
interface Refunded {
  account_id: string;
  key_id: string | null;
  usage_day: string | null;
  mode: string;
  returned_cents: number;
}

const set = (g: string) => `status = $2, refunded_cents = ${g}cost_cents, error_code = $3,
  error_message = $4, completed_at = coalesce(${g}completed_at, now()), lease_owner = NULL,
  lease_until = NULL`;
const returning = (g: string) =>
  `RETURNING ${g}account_id, ${g}key_id, ${g}usage_day, ${g}mode, ${g}cost_cents`;

const FROM_STATUS = `UPDATE generations SET ${set('')} WHERE id = $1 AND status = $5
  ${returning('')} AS returned_cents`;
const OF_ATTEMPT = `UPDATE generations SET ${set('')} WHERE ${leaseGuard('$1', '$5', '$6')}
  ${returning('')} AS returned_cents`;

/**
 * Refund: moves generation `id` from `from` to a refunded final status and gives back its price.
 * The cents returned to the balance (0 for a test render), or null when nothing changed: it is no
 * longer in `from`, or, with `lease`, that attempt no longer holds it (the failure of a superseded
 * attempt changes nothing).
 */
export async function refundIn(
  tx: Tx,
  id: string,
  from: 'queued' | 'succeeded',
  reason: RefundReason,
  lease?: Lease,
): Promise<number | null> {
  const values: unknown[] = [id, reason.status, reason.code, reason.message.slice(0, 2000)];
  let sql = FROM_STATUS;
  if (lease) {
    if (from !== 'queued') throw new Error('an attempt refunds only a queued render');
    sql = OF_ATTEMPT;
    values.push(lease.owner, lease.attempt);
  } else values.push(from);
  const { rows } = await tx.query<Refunded>(sql, values);
  return rows[0] ? giveBack(tx, id, rows[0], null) : null;
}

/** The balance, the key's day and the entry of a refund whose generation row has changed. */
async function giveBack(tx: Tx, id: string, g: Refunded, reason: string | null): Promise<number> {
  const cents = Number(g.returned_cents);
  const live = g.mode !== 'test';
  if (cents > 0) {
    if (live) await returnToBalance(tx, g.account_id, cents);
    if (g.key_id && g.usage_day) await takeBackFromDay(tx, g.key_id, g.usage_day, cents);
    if (live)
      await insertEntry(tx, {
        id: newId('led'),
        accountId: g.account_id,
        kind: 'refund',
        amountCents: cents,
        generationId: id,
        reason,
      });
  }
  return live ? cents : 0;
}
