// The statements on `idempotency_keys` outside the create (rendergate_create_generations,
// src/ledger/sql/create_generations.sql, writes and replays them).
import type { Queryable } from './pool.ts';

/** Prunes records older than `hours`, at most 5,000 a call. */
export async function pruneIdempotencyKeys(q: Queryable, hours: number): Promise<void> {
  await q.query(
    `DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(SELECT ctid FROM idempotency_keys
       WHERE created_at < now() - make_interval(hours => $1) LIMIT 5000))`,
    [hours],
  );
}
