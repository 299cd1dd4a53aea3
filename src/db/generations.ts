// Statements on generations for test renders (migrations/014): a test render is started and finished
// by the service itself in one transaction, each step guarded on the row still being a queued test
// render, so a cancel, a DELETE or the janitor that got there first wins and this changes nothing.
import type { Tx } from './pool.ts';

/** Marks a test render started (its `generation.started` event); false when it is no longer queued. */
export async function startTestRender(tx: Tx, id: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE generations SET started_at = clock_timestamp()
     WHERE id = $1 AND mode = 'test' AND status = 'queued' AND started_at IS NULL AND deleted_at IS NULL`, [id]);
  return rowCount === 1;
}

export type TestOutput =
  | { kind: 'text'; text: string }
  | { kind: 'file'; key: string; contentType: string; bytes: number; etag: string };

/** Records a test render's output; false when it left `queued` meanwhile. */
export async function finishTestRender(tx: Tx, id: string, out: TestOutput, retentionSeconds: number): Promise<boolean> {
  const set = `status = 'succeeded', completed_at = clock_timestamp(), progress = 1`;
  const where = `WHERE id = $1 AND mode = 'test' AND status = 'queued' AND deleted_at IS NULL`;
  const r = out.kind === 'text'
    ? await tx.query(`UPDATE generations SET ${set}, text_output = $2 ${where}`, [id, out.text])
    : await tx.query(
      `UPDATE generations SET ${set}, content_key = $2, content_type = $3, content_bytes = $4, content_etag = $5,
         expires_at = CASE WHEN $6::int > 0 THEN now() + make_interval(secs => $6::int) END ${where}`,
      [id, out.key, out.contentType, out.bytes, out.etag, retentionSeconds]);
  return r.rowCount === 1;
}
