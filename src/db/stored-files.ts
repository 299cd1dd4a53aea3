// SQL for the janitor's orphan sweep: which of a batch of storage keys a row still names or may
// still name (generations.content_key, uploads.storage_key, a queued render's current attempt). A row
// whose file was removed at its expiry (content_removed_at) names it no more: a test output that many
// rows share (queue/test-stored.ts) is kept only for the rows still serving it.
import type { Queryable } from './pool.ts';

export interface KeyOwners {
  /** Keys a generation's content_key or an upload's storage_key names. */
  named: Set<string>;
  /** Queued generations by id, with the attempt now running (or next to run). */
  queuedAttempts: Map<string, number>;
}

export async function keyOwners(
  db: Queryable,
  keys: string[],
  generationIds: string[],
): Promise<KeyOwners> {
  const { rows } = await db.query<{ key: string }>(
    `SELECT content_key AS key FROM generations
     WHERE content_key = ANY ($1::text[]) AND content_removed_at IS NULL
     UNION ALL SELECT storage_key FROM uploads WHERE storage_key = ANY ($1::text[])`,
    [keys],
  );
  const queued = await db.query<{ id: string; attempts: number }>(
    `SELECT id, attempts FROM generations WHERE id = ANY ($1::text[]) AND status = 'queued'`,
    [generationIds],
  );
  return {
    named: new Set(rows.map((r) => r.key)),
    queuedAttempts: new Map(queued.rows.map((r) => [r.id, r.attempts])),
  };
}
