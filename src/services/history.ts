// The studio's History: the account's live generations (test keys' renders are not shown: the studio
// acts live), each with its source ("Studio", or the name of the API key that made it), filtered by
// model and status, newest first. A row carries the fields of the public generation (docs/api.md
// "Generations") that the page shows, under the same names, so that the page's rows and the live row
// (the public JSON of one generation) are drawn by the same template.
import type { Db } from '../db/pool.ts';
import {
  generationSource,
  historyRows,
  medianRenderSeconds,
  sessionHistoryRows,
  type HistoryRow,
  type KeyOfRow,
} from '../db/generations-history.ts';
import type { SessionRow } from '../db/studio-sessions.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';
import { accountFor } from '../domain/authorize.ts';
import type { Principal } from '../domain/principal.ts';

export const HISTORY_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'refunded'] as const;

/** Who started it: a key by name, else the member's email (renders before teams: "Studio"). */
const sourceOf = (r: KeyOfRow) =>
  r.key_id === null
    ? (r.started_by ?? 'Studio')
    : `${r.key_name ?? 'API key'} (${r.key_start ?? ''}…)`;

/** One row of History: the shown subset of the public generation, and its source. */
export interface HistoryItem {
  id: string;
  modelId: string;
  /** Only the inputs the page shows: the prompt, and the start of a text. */
  inputs: { prompt?: string; text?: string };
  status: string;
  costCents: number;
  refundedCents: number;
  contentUrl?: string;
  contentType?: string | null;
  textOutput?: string;
  error?: { code: string; message: string | null };
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  progress: number | null;
  queuePosition: number | null;
  source: string;
}

/** As services/generation-view.ts draws these fields, from the row History reads. */
function item(r: HistoryRow, publicUrl: string): HistoryItem {
  const inputs: HistoryItem['inputs'] = {};
  if (r.prompt !== null) inputs.prompt = r.prompt;
  if (r.text !== null) inputs.text = r.text;
  const queued = r.status === 'queued';
  const v: HistoryItem = {
    id: r.id,
    modelId: r.model_id,
    inputs,
    status: r.status,
    costCents: r.cost_cents,
    refundedCents: r.refunded_cents,
    createdAt: r.created_at,
    startedAt: r.started_at,
    completedAt: r.completed_at,
    progress: r.status === 'succeeded' ? 1 : queued && r.started_at ? r.progress : null,
    queuePosition: queued && !r.started_at ? r.queue_position : null,
    source: sourceOf(r),
  };
  if (r.status === 'succeeded' && r.has_content) {
    v.contentUrl = `${publicUrl}/v1/generations/${r.id}/content`;
    v.contentType = r.content_type;
  }
  if (r.status === 'succeeded' && r.text_output !== null) v.textOutput = r.text_output;
  if ((r.status === 'failed' || r.status === 'refunded') && r.error_code)
    v.error = { code: r.error_code, message: r.error_message };
  return v;
}

type ListQuery = {
  limit: number;
  cursor: string | null;
  status: string | null;
  modelId: string | null;
};

/** An estimate is read again after this long (a running render's row is fetched every few s). */
const ESTIMATE_TTL_MS = 60_000;
const ESTIMATES_KEPT = 1000;

export class History {
  private estimates = new Map<string, { at: number; seconds: number | null }>();

  constructor(
    private db: Db,
    private publicUrl: string,
  ) {}

  /**
   * How long a render of the model takes, by the median of the account's latest ones (null with
   * none), for the time left of a running render whose backend reports no progress.
   */
  async typicalSeconds(p: Principal, modelId: string): Promise<number | null> {
    const accountId = accountFor(p, 'renders.view');
    const key = `${accountId} ${modelId}`;
    const now = Date.now();
    const known = this.estimates.get(key);
    if (known && now - known.at < ESTIMATE_TTL_MS) return known.seconds;
    const seconds = await medianRenderSeconds(this.db, accountId, modelId);
    if (this.estimates.size >= ESTIMATES_KEPT) this.estimates.clear();
    this.estimates.set(key, { at: now, seconds });
    return seconds;
  }

  async list(p: Principal, q: ListQuery): Promise<Page<HistoryItem>> {
    const accountId = accountFor(p, 'renders.view');
    return this.page(q, await historyRows(this.db, accountId, this.query(q)));
  }

  /**
   * list() for the account of a session, read with the session in one statement: a reader for
   * Sessions.findWith(), which checks the session's row and passes on the page only if it is live.
   * Every member may see History (domain/authorize.ts), so the page is read before who acts is
   * known.
   */
  async listOfSession(
    idHash: Buffer,
    idleSeconds: number,
    q: ListQuery,
  ): Promise<{ row: SessionRow | null; value: Page<HistoryItem> }> {
    const r = await sessionHistoryRows(this.db, { idHash, idleSeconds }, this.query(q));
    return { row: r.session, value: this.page(q, r.rows) };
  }

  /** One row more than the page, to know whether there is a next one. */
  private query(q: ListQuery) {
    const afterId = q.cursor === null ? null : decodeCursor(q.cursor);
    return { limit: q.limit + 1, afterId, status: q.status, modelId: q.modelId };
  }

  private page(q: ListQuery, rows: HistoryRow[]): Page<HistoryItem> {
    const n = Math.min(rows.length, q.limit);
    const data: HistoryItem[] = new Array<HistoryItem>(n);
    for (let i = 0; i < n; i++) data[i] = item(rows[i], this.publicUrl);
    return {
      data,
      nextCursor: rows.length > q.limit ? encodeCursor(data[n - 1].id) : null,
    };
  }

  /** "Studio" or the key's name and start; null when the account has no such generation. */
  async source(p: Principal, id: string): Promise<string | null> {
    const r = await generationSource(this.db, accountFor(p, 'renders.view'), id);
    return r ? sourceOf(r) : null;
  }
}
