// SQL of api_keys used to bound an account's keys: the live (not revoked) keys of an account,
// counted under a per-account lock held by the transaction that then adds one, so parallel
// creations cannot pass the bound together.
import type { Queryable } from './pool.ts';

export async function lockAndCountLiveKeys(tx: Queryable, accountId: string): Promise<number> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('keys:' || $1, 0))", [accountId]);
  const { rows } = await tx.query(
    'SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL',
    [accountId]);
  return rows[0].n as number;
}
