// The public shape of a generation (docs/api.md "Generations"), built from its row.
export type GenerationRow = Record<string, unknown> & {
  id: string; model_id: string; inputs: Record<string, unknown>; status: string;
  cost_cents: number; refunded_cents: number; content_key: string | null; content_type: string | null;
  text_output: string | null; error_code: string | null; error_message: string | null;
  created_at: Date; started_at: Date | null; completed_at: Date | null;
  progress?: number | null; expires_at?: Date | null; content_removed_at?: Date | null;
  /** Computed by the read (QUEUE_POSITION), not stored. */
  queue_position?: number | null;
};

export const GENERATION_COLUMNS = `id, model_id, inputs, status, cost_cents, refunded_cents, content_key, content_type,
  content_bytes, content_etag, text_output, error_code, error_message, created_at, started_at, completed_at,
  progress, expires_at, content_removed_at`;

/**
 * Positions are counted up to this many (an index-only scan of the model's waiting renders that stops
 * there): a render further back shows this number, a lower bound, and never costs a scan of the queue.
 * Every create and every waiting row of a list pays for the count: at 10,000 a create over a deep queue
 * spent about 3 ms of PostgreSQL CPU on it (a fifth of the throughput of creates, measured by the bench),
 * at 100 it is a few microseconds, and a client far back in a queue learns "100 or more" either way.
 */
export const QUEUE_POSITION_CAP = 100;

/** The queue position of generation `g` (a table alias) as a column: 1 = the next of its model to start. */
export const QUEUE_POSITION = (g: string) => `CASE WHEN ${g}.status = 'queued' AND ${g}.started_at IS NULL THEN
  (SELECT count(*)::int FROM (SELECT 1 FROM generations w WHERE w.model_id = ${g}.model_id AND w.status = 'queued'
     AND w.started_at IS NULL AND w.id < ${g}.id LIMIT ${QUEUE_POSITION_CAP - 1}) ahead) + 1 END AS queue_position`;

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function generationView(r: GenerationRow, publicUrl: string): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: r.id, modelId: r.model_id, inputs: r.inputs, status: r.status,
    costCents: r.cost_cents, refundedCents: r.refunded_cents,
  };
  if (r.status === 'succeeded' && r.content_key) {
    v.contentUrl = `${publicUrl}/v1/generations/${r.id}/content`;
    v.contentType = r.content_type;
  }
  if (r.status === 'succeeded' && r.text_output !== null) v.textOutput = r.text_output;
  if ((r.status === 'failed' || r.status === 'refunded') && r.error_code) v.error = { code: r.error_code, message: r.error_message };
  v.createdAt = r.created_at.toISOString();
  v.startedAt = iso(r.started_at);
  v.completedAt = iso(r.completed_at);
  v.progress = r.status === 'succeeded' ? 1 : r.status === 'queued' && r.started_at ? (r.progress ?? null) : null;
  v.queuePosition = r.status === 'queued' && !r.started_at ? (r.queue_position ?? null) : null;
  v.expiresAt = r.status === 'succeeded' && r.content_key ? iso(r.expires_at) : null;
  return v;
}

/**
 * A row as `row_to_json` wrote it (a webhook's snapshot): timestamps back to Dates, then the view.
 * Events are sent at a start or a final status, where the queue position is null by definition.
 */
export function snapshotView(snap: Record<string, unknown>, publicUrl: string): Record<string, unknown> {
  const date = (k: string) => (typeof snap[k] === 'string' ? new Date(snap[k] as string) : null);
  return generationView({
    ...(snap as GenerationRow), created_at: date('created_at')!, started_at: date('started_at'), completed_at: date('completed_at'),
    expires_at: date('expires_at'), content_removed_at: date('content_removed_at'), queue_position: null,
  }, publicUrl);
}
