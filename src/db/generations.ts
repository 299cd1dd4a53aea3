// Statements on generations for test renders (migrations/014): test renders are started and finished by
// the service itself, a batch at a time in one transaction, each row guarded on still being a queued test
// render, so a cancel, a DELETE or the janitor that got there first wins and the batch skips that row.
import type { Tx } from './pool.ts';

/** Marks test renders started (their `generation.started` events); returns those still queued. */
export async function startTestRenders(tx: Tx, ids: string[]): Promise<Set<string>> {
  const { rows } = await tx.query(
    `UPDATE generations SET started_at = clock_timestamp()
     WHERE id = ANY ($1) AND mode = 'test' AND status = 'queued' AND started_at IS NULL AND deleted_at IS NULL
     RETURNING id`, [ids]);
  return new Set(rows.map((r) => r.id as string));
}

export type TestOutput =
  | { kind: 'text'; text: string }
  | { kind: 'file'; key: string; contentType: string; bytes: number; etag: string };

/** Records test renders' outputs; returns the ids recorded (the others left `queued` meanwhile). */
export async function finishTestRenders(tx: Tx, items: { id: string; out: TestOutput }[], retentionSeconds: number): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const rows = items.map(({ id, out }) => (out.kind === 'text'
    ? { id, text: out.text }
    : { id, key: out.key, ct: out.contentType, bytes: out.bytes, etag: out.etag }));
  const r = await tx.query(
    `UPDATE generations g SET status = 'succeeded', completed_at = clock_timestamp(), progress = 1,
       text_output = x.text, content_key = x.key, content_type = x.ct, content_bytes = x.bytes, content_etag = x.etag,
       expires_at = CASE WHEN x.key IS NOT NULL AND $2::int > 0 THEN now() + make_interval(secs => $2::int) END
     FROM json_to_recordset($1) AS x(id text, text text, key text, ct text, bytes bigint, etag text)
     WHERE g.id = x.id AND g.mode = 'test' AND g.status = 'queued' AND g.deleted_at IS NULL
     RETURNING g.id`, [JSON.stringify(rows), retentionSeconds]);
  return new Set(r.rows.map((x) => x.id as string));
}
