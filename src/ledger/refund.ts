// Refunds: a render's price given back, whole (a queued render cancelled, failed or past its
// deadline; a succeeded one refunded by the operator) or in part (a succeeded render that delivered
// less than it was charged for). Each is one guarded statement on the generation, then the balance,
// the key's day, the budgets and the 'refund' entry, in the caller's transaction: the generation
// row first, then the account, then the day row and the budgets' rows, the order a create batch
// takes the last three in.
//   whole  moves the generation to a final refunded status, once (the guard: the status it leaves,
//          or the attempt's lease); it returns what no earlier refund of part returned.
//   part   raises refunded_cents, guarded so that the refunds never pass the price (the CHECK of
//          migrations/027 holds it too); the render stays succeeded.
// A test render was never charged: its refund takes back only its key's day and budgets (its test
// record), under a share of its account's lock.
import type { Tx } from '../db/pool.ts';
import { leaseGuard, type Lease } from '../db/lease.ts';
import { newId } from '../domain/ids.ts';
import type { RenderFailureCode } from '../domain/render-failures.ts';
import { shareAccount } from '../db/accounts.ts';
import { returnToBalance } from './balance.ts';
import { insertEntry } from './entries.ts';
import { takeBackFromBudgets, takeBackFromDay } from './spend.ts';

export interface RefundReason {
  status: 'failed' | 'refunded';
  code: RenderFailureCode;
  message: string;
}

/** What a refunding statement returns: whose charge, on which day of which key, what goes back. */
interface Refunded {
  account_id: string;
  key_id: string | null;
  usage_day: string | null;
  mode: string;
  started_by: string | null;
  returned_cents: number;
}

const set = (g: string) => `status = $2, refunded_cents = ${g}cost_cents, error_code = $3,
  error_message = $4, completed_at = coalesce(${g}completed_at, now()), lease_owner = NULL,
  lease_until = NULL`;
const returning = (g: string) =>
  `RETURNING ${g}account_id, ${g}key_id, ${g}usage_day::text, ${g}mode, ${g}started_by,
  ${g}cost_cents`;

// A queued render has had nothing returned (its CHECK): the whole price goes back. A succeeded one
// may have had part returned: the rest goes back, read under the row's lock taken first (FOR UPDATE
// waits for a concurrent refund of part and reads the row as that one left it).
const FROM_QUEUED = `UPDATE generations SET ${set('')} WHERE id = $1 AND status = 'queued'
  ${returning('')} AS returned_cents`;
const OF_ATTEMPT = `UPDATE generations SET ${set('')} WHERE ${leaseGuard('$1', '$5', '$6')}
  ${returning('')} AS returned_cents`;
const FROM_SUCCEEDED = `
WITH o AS (SELECT id, refunded_cents FROM generations WHERE id = $1 AND status = 'succeeded'
           FOR UPDATE)
UPDATE generations g SET ${set('g.')} FROM o WHERE g.id = o.id
${returning('g.')} - o.refunded_cents AS returned_cents`;

/**
 * Refund of the whole price: moves generation `id` from `from` to a refunded final status and gives
 * back what was not returned yet. The cents returned to the balance (0 for a test render), or null
 * when nothing changed: it is no longer in `from`, or, with `lease`, that attempt no longer holds
 * it (the failure of a superseded attempt changes nothing).
 */
export async function refundIn(
  tx: Tx,
  id: string,
  from: 'queued' | 'succeeded',
  reason: RefundReason,
  lease?: Lease,
): Promise<number | null> {
  const values: unknown[] = [id, reason.status, reason.code, reason.message.slice(0, 2000)];
  let sql = from === 'queued' ? FROM_QUEUED : FROM_SUCCEEDED;
  if (lease) {
    if (from !== 'queued') throw new Error('an attempt refunds only a queued render');
    sql = OF_ATTEMPT;
    values.push(lease.owner, lease.attempt);
  }
  const { rows } = await tx.query<Refunded>(sql, values);
  return rows[0] ? giveBack(tx, id, rows[0], null) : null;
}

/**
 * Refund of part: returns `amountCents` of succeeded generation `id`'s price, with `reason` on its
 * entry. The cents returned to the balance (0 for a test render), or null when nothing changed: the
 * render is not succeeded, or the refunds would pass its price.
 */
export async function refundPartIn(
  tx: Tx,
  id: string,
  amountCents: number,
  reason: string | null = null,
): Promise<number | null> {
  if (!Number.isSafeInteger(amountCents) || amountCents <= 0)
    throw new RangeError(`a refund of part is a positive number of cents, not ${amountCents}`);
  const { rows } = await tx.query<Refunded>(
    `UPDATE generations SET refunded_cents = refunded_cents + $2
     WHERE id = $1 AND status = 'succeeded' AND refunded_cents <= cost_cents - $2
     RETURNING account_id, key_id, usage_day::text, mode, started_by,
       $2::bigint AS returned_cents`,
    [id, amountCents],
  );
  return rows[0] ? giveBack(tx, id, rows[0], reason) : null;
}

/** The balance, the key's day, the budgets and the entry of a refund whose row has changed. */
async function giveBack(tx: Tx, id: string, g: Refunded, reason: string | null): Promise<number> {
  const cents = Number(g.returned_cents);
  const live = g.mode !== 'test';
  if (cents > 0) {
    // A test render's refund moves no money: it shares the account's lock (as a DELETE of it
    // already does, and its foreign key check would), which still waits for a budget being set
    // (FOR UPDATE) and so never gives back to a budget whose usage is being counted from history.
    if (live) await returnToBalance(tx, g.account_id, cents);
    else await shareAccount(tx, g.account_id);
    if (g.key_id && g.usage_day) await takeBackFromDay(tx, g.key_id, g.usage_day, cents);
    await takeBackFromBudgets(
      tx,
      {
        accountId: g.account_id,
        keyId: g.key_id,
        day: g.usage_day,
        live,
        startedBy: g.started_by,
      },
      cents,
    );
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
