// Types the queue's modules share (claim.ts, account-limit.ts, worker.ts, janitor.ts), in a module
// of their own so that those modules need not import each other for them.
import type { Tx } from '../db/pool.ts';
import type { Lease } from '../db/lease.ts';
import type { ClaimRow } from '../db/generations-claim.ts';
import type { RefundReason } from '../db/generations-attempt.ts';

export interface ClaimedJob extends ClaimRow {
  /**
   * This attempt's fencing token (db/lease.ts): every later statement for the attempt is guarded by
   * it.
   */
  lease: Lease;
}

/**
 * The refund of a render, as the queue needs it: services/ledger.ts's, given by the composition
 * root (the ledger sits above the queue). Returns the cents returned, or null when nothing changed.
 */
export interface Refunder {
  refund(
    tx: Tx,
    id: string,
    from: 'queued' | 'succeeded',
    reason: RefundReason,
    lease?: Lease,
  ): Promise<number | null>;
}
