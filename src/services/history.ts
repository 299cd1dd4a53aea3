// The studio's History: the account's generations in their public shape, each with its source ("Studio",
// or the name of the API key that made it), filtered by model and status, newest first.
import type { Db } from '../db/pool.ts';
import { generationSource, historyRows, type KeyOfRow } from '../db/generations-history.ts';
import { generationView, type GenerationRow } from './generation-view.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';

export const HISTORY_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'refunded'] as const;

const sourceOf = (r: KeyOfRow) =>
  r.key_id === null ? 'Studio' : `${r.key_name ?? 'API key'} (${r.key_start ?? ''}…)`;

export class History {
  constructor(
    private db: Db,
    private publicUrl: string,
  ) {}

  async list(
    accountId: string,
    q: { limit: number; cursor: string | null; status: string | null; modelId: string | null },
  ): Promise<Page<Record<string, unknown>>> {
    const afterId = q.cursor === null ? null : decodeCursor(q.cursor);
    const rows = await historyRows<GenerationRow>(this.db, accountId, {
      limit: q.limit + 1,
      afterId,
      status: q.status,
      modelId: q.modelId,
    });
    const data: Record<string, unknown>[] = rows
      .slice(0, q.limit)
      .map((r) => ({ ...generationView(r, this.publicUrl), source: sourceOf(r) }));
    return {
      data,
      nextCursor: rows.length > q.limit ? encodeCursor(data[data.length - 1].id as string) : null,
    };
  }

  /** "Studio" or the key's name and start; null when the account has no such generation. */
  async source(accountId: string, id: string): Promise<string | null> {
    const r = await generationSource(this.db, accountId, id);
    return r ? sourceOf(r) : null;
  }
}
