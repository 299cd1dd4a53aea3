// Types the queue's modules share (claim.ts, account-limit.ts, worker.ts, attempt.ts), in a module
// of their own so that those modules need not import each other for them.
import type { Lease } from '../db/lease.ts';
import type { ClaimRow } from '../db/generations-claim.ts';

export interface ClaimedJob extends ClaimRow {
  /**
   * This attempt's fencing token (db/lease.ts): every later statement for the attempt is guarded by
   * it.
   */
  lease: Lease;
}
