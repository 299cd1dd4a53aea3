// Test renders (migrations/014): started and finished by the service itself, a batch at a time, one
// statement each (queue/test-render.ts says why not one transaction), each row guarded on still being
// a queued test render.
import type { Queryable } from './pool.ts';

/**
 * Marks test renders started, for their `generation.started` events: only those whose account has a
 * test endpoint that takes that event (only test endpoints receive test renders' events,
 * migrations/025; the others' finish sets started_at with their final status, one write instead of
 * two). Returns the ids marked.
 */
export async function startTestRenders(tx: Queryable, ids: string[]): Promise<Set<string>> {
  const { rows } = await tx.query<{ id: string }>({
    name: 'test-renders-start',
    text: `UPDATE generations g SET started_at = clock_timestamp()
     WHERE g.id = ANY ($1) AND g.mode = 'test' AND g.status = 'queued' AND g.started_at IS NULL AND g.deleted_at IS NULL
       AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.account_id = g.account_id AND e.enabled
                   AND e.deleted_at IS NULL AND e.mode = 'test'
                   AND 'generation.started' = ANY (e.events))
     RETURNING g.id`,
    values: [ids],
  });
  return new Set(rows.map((r) => r.id));
}

export type TestOutput =
  | { kind: 'text'; text: string }
  | { kind: 'file'; key: string; contentType: string; bytes: number; etag: string };

/** Records test renders' outputs; returns the ids recorded (the others left `queued` meanwhile). */
export async function finishTestRenders(
  tx: Queryable,
  items: { id: string; out: TestOutput }[],
  retentionSeconds: number,
): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const rows = items.map(({ id, out }) =>
    out.kind === 'text'
      ? { id, text: out.text }
      : { id, key: out.key, ct: out.contentType, bytes: out.bytes, etag: out.etag },
  );
  // `g.id = ANY ($3)`: the rows are found by the primary key, whatever the planner guesses of the
  // recordset's size (a guess of 100 rows made it scan the whole table).
  const r = await tx.query<{ id: string }>({
    name: 'test-renders-finish',
    text: `UPDATE generations g SET status = 'succeeded', completed_at = clock_timestamp(), progress = 1,
       started_at = coalesce(g.started_at, clock_timestamp()),
       text_output = x.text, content_key = x.key, content_type = x.ct, content_bytes = x.bytes, content_etag = x.etag,
       expires_at = CASE WHEN x.key IS NOT NULL AND $2::int > 0 THEN now() + make_interval(secs => $2::int) END
     FROM json_to_recordset($1) AS x(id text, text text, key text, ct text, bytes bigint, etag text)
     WHERE g.id = ANY ($3::text[]) AND g.id = x.id AND g.mode = 'test' AND g.status = 'queued' AND g.deleted_at IS NULL
     RETURNING g.id`,
    values: [JSON.stringify(rows), retentionSeconds, items.map((x) => x.id)],
  });
  return new Set(r.rows.map((x) => x.id));
}
