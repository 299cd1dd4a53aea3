// The public shape of a generation (docs/api.md "Generations"), built from its row.
export type GenerationRow = Record<string, unknown> & {
  id: string;
  model_id: string;
  inputs: Record<string, unknown>;
  status: string;
  cost_cents: number;
  refunded_cents: number;
  content_key: string | null;
  content_type: string | null;
  text_output: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  progress?: number | null;
  expires_at?: Date | null;
  content_removed_at?: Date | null;
  /** 'live' or 'test' (migrations/014); a row read without it is live. */
  mode?: string;
  /** Computed by the read (QUEUE_POSITION), not stored. */
  queue_position?: number | null;
  /** The counts its backend reported (migrations/039), where the read asked for them. */
  input_tokens?: number | null;
  output_tokens?: number | null;
};

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function generationView(r: GenerationRow, publicUrl: string): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: r.id,
    modelId: r.model_id,
    inputs: r.inputs,
    status: r.status,
    costCents: r.cost_cents,
    refundedCents: r.refunded_cents,
  };
  if (r.status === 'succeeded' && r.content_key) {
    v.contentUrl = `${publicUrl}/v1/generations/${r.id}/content`;
    v.contentType = r.content_type;
  }
  if (r.status === 'succeeded' && r.text_output !== null) v.textOutput = r.text_output;
  if ((r.status === 'failed' || r.status === 'refunded') && r.error_code)
    v.error = { code: r.error_code, message: r.error_message };
  v.createdAt = r.created_at.toISOString();
  v.startedAt = iso(r.started_at);
  v.completedAt = iso(r.completed_at);
  v.progress =
    r.status === 'succeeded'
      ? 1
      : r.status === 'queued' && r.started_at
        ? (r.progress ?? null)
        : null;
  v.queuePosition = r.status === 'queued' && !r.started_at ? (r.queue_position ?? null) : null;
  v.expiresAt = r.status === 'succeeded' && r.content_key ? iso(r.expires_at) : null;
  if (r.mode === 'test') v.mode = 'test'; // live renders carry no mode: their shape is unchanged
  return v;
}

/**
 * A row as `row_to_json` wrote it (a webhook's snapshot): timestamps back to Dates, then the view.
 * Events are sent at a start or a final status, where the queue position is null by definition.
 */
export function snapshotView(
  snap: Record<string, unknown>,
  publicUrl: string,
): Record<string, unknown> {
  const date = (k: string) => (typeof snap[k] === 'string' ? new Date(snap[k]) : null);
  return generationView(
    {
      ...(snap as GenerationRow),
      created_at: date('created_at')!,
      started_at: date('started_at'),
      completed_at: date('completed_at'),
      expires_at: date('expires_at'),
      content_removed_at: date('content_removed_at'),
      queue_position: null,
    },
    publicUrl,
  );
}
