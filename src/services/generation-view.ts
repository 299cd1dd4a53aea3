// The public shape of a generation (CONTRACT.md "Generations"), built from its row.
export type GenerationRow = Record<string, unknown> & {
  id: string; model_id: string; inputs: Record<string, unknown>; status: string;
  cost_cents: number; refunded_cents: number; content_key: string | null; content_type: string | null;
  text_output: string | null; error_code: string | null; error_message: string | null;
  created_at: Date; started_at: Date | null; completed_at: Date | null;
};

export const GENERATION_COLUMNS = `id, model_id, inputs, status, cost_cents, refunded_cents, content_key, content_type,
  content_bytes, content_etag, text_output, error_code, error_message, created_at, started_at, completed_at`;

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
  v.startedAt = r.started_at ? r.started_at.toISOString() : null;
  v.completedAt = r.completed_at ? r.completed_at.toISOString() : null;
  return v;
}
