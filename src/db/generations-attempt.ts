// What a render attempt writes on its generation, each statement guarded by the attempt's fencing
// token (lease.ts): lease renewal, progress, success, retry, the hand-back at shutdown or over an
// account's limit. Its failure, which returns the charge, is a refund of the ledger (ledger/refund.ts),
// under the same guard.
import type { Queryable } from './pool.ts';
import { leaseGuard, type Lease } from './lease.ts';

/** Renews the attempt's lease; false when the attempt no longer holds its (live) generation. */
export async function renewLease(
  q: Queryable,
  id: string,
  lease: Lease,
  seconds: number,
): Promise<boolean> {
  const r = await q.query({
    name: 'lease-renew',
    text: `UPDATE generations SET lease_until = now() + make_interval(secs => $4)
           WHERE ${leaseGuard('$1', '$2', '$3')} AND deleted_at IS NULL RETURNING id`,
    values: [id, lease.owner, lease.attempt, seconds],
  });
  return r.rowCount !== 0;
}

export async function writeProgress(
  q: Queryable,
  id: string,
  lease: Lease,
  value: number,
): Promise<void> {
  await q.query({
    name: 'render-progress',
    text: `UPDATE generations SET progress = $4 WHERE ${leaseGuard('$1', '$2', '$3')}`,
    values: [id, lease.owner, lease.attempt, value],
  });
}

/** Records a text output; false when the attempt no longer holds the generation. */
export async function succeedWithText(
  q: Queryable,
  id: string,
  lease: Lease,
  text: string,
  tokens?: { input: number; output: number },
): Promise<boolean> {
  // Named: prepared once per connection, not parsed and planned at every chat answer's end.
  const r = await q.query({
    name: 'succeed-text',
    text: `UPDATE generations SET status = 'succeeded', text_output = $4, input_tokens = $5,
       output_tokens = $6, completed_at = now(), lease_owner = NULL, lease_until = NULL
     WHERE ${leaseGuard('$1', '$2', '$3')}`,
    values: [id, lease.owner, lease.attempt, text, tokens?.input ?? null, tokens?.output ?? null],
  });
  return r.rowCount === 1;
}

export interface StoredOutput {
  key: string;
  contentType: string;
  bytes: number;
  etag: string;
  retentionSeconds: number;
}

/** Records a stored file; false when the attempt no longer holds the (live) generation. */
export async function succeedWithFile(
  q: Queryable,
  id: string,
  lease: Lease,
  o: StoredOutput,
): Promise<boolean> {
  const r = await q.query(
    `UPDATE generations SET status = 'succeeded', content_key = $4, content_type = $5, content_bytes = $6,
       content_etag = $7, completed_at = now(), lease_owner = NULL, lease_until = NULL,
       expires_at = CASE WHEN $8::int > 0 THEN now() + make_interval(secs => $8::int) END
     WHERE ${leaseGuard('$1', '$2', '$3')} AND deleted_at IS NULL`,
    [id, lease.owner, lease.attempt, o.key, o.contentType, o.bytes, o.etag, o.retentionSeconds],
  );
  return r.rowCount === 1;
}

/**
 * Puts the render back in the queue after `backoff` seconds. `fetchTimeout` 1 counts an input-fetch
 * timeout and applies only when none was counted before. False when nothing changed.
 */
export async function retryLater(
  q: Queryable,
  id: string,
  lease: Lease,
  backoff: number,
  fetchTimeout: 0 | 1,
): Promise<boolean> {
  const r = await q.query(
    `UPDATE generations SET run_after = now() + make_interval(secs => $4), lease_owner = NULL, lease_until = NULL,
       fetch_timeouts = fetch_timeouts + $5
     WHERE ${leaseGuard('$1', '$2', '$3')} AND ($5 = 0 OR fetch_timeouts = 0)`,
    [id, lease.owner, lease.attempt, backoff, fetchTimeout],
  );
  return r.rowCount === 1;
}

/** Hands the attempts of `owner` back to the queue at shutdown, each only where it still holds its row. */
export async function handBackAtShutdown(
  q: Queryable,
  owner: string,
  jobs: Array<{ id: string; attempt: number }>,
): Promise<void> {
  await q.query(
    `UPDATE generations g SET lease_owner = NULL, lease_until = NULL, run_after = now(),
       attempts = greatest(g.attempts - 1, 0)
     FROM unnest($1::text[], $3::int[]) AS a(id, attempt)
     WHERE ${leaseGuard('a.id', '$2', 'a.attempt', 'g')}`,
    [jobs.map((j) => j.id), owner, jobs.map((j) => j.attempt)],
  );
}

// Undoes a claim, guarded by the attempt's own token: the lease, the attempt's number, and the start
// time when this claim was the first (a client polling saw it started for a moment; it reads null again).
const HAND_BACK = `
UPDATE generations g SET lease_owner = NULL, lease_until = NULL, attempts = g.attempts - 1,
  started_at = CASE WHEN g.attempts = 1 THEN NULL ELSE g.started_at END
FROM unnest($1::text[], $3::int[]) AS a(id, attempt)
WHERE ${leaseGuard('a.id', '$2', 'a.attempt', 'g')}`;

/** Undoes claims of `owner` as if they had not happened (queue/account-limit.ts). */
export async function undoClaims(
  q: Queryable,
  owner: string,
  jobs: Array<{ id: string; attempt: number }>,
): Promise<void> {
  await q.query(HAND_BACK, [jobs.map((j) => j.id), owner, jobs.map((j) => j.attempt)]);
}
