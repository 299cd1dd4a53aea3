// Walking an account's chain from its first event (`rendergate audit verify`), a page at a time so
// a long log never sits in memory whole.
import { chainAfter } from '../db/audit-events.ts';
import type { Queryable } from '../db/pool.ts';
import { checkChain, GENESIS_HASH, type ChainBreak } from './chain.ts';

export type VerifyResult =
  { ok: true; checked: number } | { ok: false; checked: number; at: ChainBreak };

const PAGE = 1000;

/** Checks every event of `accountId` in chain order; stops at the first that does not hold. */
export async function verifyChain(q: Queryable, accountId: string): Promise<VerifyResult> {
  let prev = GENESIS_HASH;
  let afterSeq = 0;
  let checked = 0;
  for (;;) {
    const rows = await chainAfter(q, accountId, afterSeq, PAGE);
    const broken = checkChain(rows, prev);
    if (broken) {
      return {
        ok: false,
        checked: checked + rows.findIndex((r) => r.id === broken.id),
        at: broken,
      };
    }
    checked += rows.length;
    if (rows.length < PAGE) return { ok: true, checked };
    prev = rows.at(-1)!.hash;
    afterSeq = rows.at(-1)!.seq;
  }
}
