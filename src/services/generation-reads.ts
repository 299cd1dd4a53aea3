// Reading renders: one generation (from the poll cache when it has it), its `Prefer: wait`, its file,
// and the account's list.
import type { Config } from '../config.ts';
import type { Db } from '../db/pool.ts';
import { listGenerations, liveGeneration, reportedTokens } from '../db/generations.ts';
import { ApiError } from '../domain/errors.ts';
import { isId } from '../domain/ids.ts';
import { generationView, type GenerationRow } from './generation-view.ts';
import type { Waiters } from '../admission/waiters.ts';
import type { KeyMode } from './keys.ts';
import { accountFor, authorize } from '../domain/authorize.ts';
import { modeOf, type Principal } from '../domain/principal.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';
import type { CachedGeneration, GenerationCache } from './generation-cache.ts';
import { openEventStream } from './generation-events.ts';

/** The reported counts of a row read with them (undefined: read without them). */
function tokensOf(r: GenerationRow): { input: number; output: number } | null | undefined {
  if (r.input_tokens === undefined || r.output_tokens === undefined) return undefined;
  if (r.input_tokens === null || r.output_tokens === null) return null;
  return { input: r.input_tokens, output: r.output_tokens };
}

/** How long a poll may be answered from memory while its render waits to start (its queue position moves). */
const WAITING_FRESH_MS = 1_000;

export interface GenerationReadsOptions {
  db: Db;
  config: Config;
  /** Polls answered from memory (API processes). */
  cache?: GenerationCache;
  /** `Prefer: wait` requests. */
  waiters?: Waiters;
  /** Live event streams (generation-events.ts), woken like `waiters`. */
  streams?: Waiters;
}

export class GenerationReads {
  constructor(private o: GenerationReadsOptions) {}

  /**
   * The generation `id` of the principal's account and mode (test keys see test renders only), from
   * the cache when it has it.
   */
  async found(p: Principal, id: string): Promise<CachedGeneration> {
    const accountId = accountFor(p, 'renders.view');
    const mode = modeOf(p);
    if (!isId('gen', id)) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    const g = this.o.cache ? await this.o.cache.get(id, this.load) : await this.load(id);
    if (!g || g.accountId !== accountId || (g.mode ?? 'live') !== mode)
      throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    return g;
  }

  /** Reads a generation for found() (a field, so that a poll creates no closure). */
  private load = async (id: string): Promise<CachedGeneration | null> => {
    const row = (await liveGeneration(this.o.db, id)) as
      (GenerationRow & { account_id: string; mode: KeyMode }) | null;
    if (!row) return null;
    // A render waiting to start moves up the queue without its own row changing: its copy is kept briefly.
    const staleAt =
      row.status === 'queued' && !row.started_at ? performance.now() + WAITING_FRESH_MS : undefined;
    return {
      row,
      accountId: row.account_id,
      mode: row.mode,
      json: JSON.stringify(generationView(row, this.o.config.publicUrl)),
      staleAt,
    };
  };

  /**
   * The generation's JSON once it is final, or when `seconds` have passed, or when `closed` fires (the
   * client went away), whichever comes first. `applied` is false when the process already holds its
   * most waiting requests: the answer is then the current state, at once. `tokens`: the counts its
   * backend reported (null: none), when the row read had them.
   */
  async waitJson(
    p: Principal,
    id: string,
    seconds: number,
    closed: AbortSignal,
  ): Promise<{
    json: string;
    applied: boolean;
    tokens?: { input: number; output: number } | null;
  }> {
    const accountId = accountFor(p, 'renders.view');
    if (!this.o.waiters || !this.o.cache)
      return { json: await this.getJson(p, id), applied: false };
    const watched = await this.o.waiters.watch(
      id,
      { seconds, closed, accountId },
      () => this.found(p, id),
      (g) => g.row.status !== 'queued',
    );
    if (!watched) return { json: await this.getJson(p, id), applied: false };
    const { value: g, timedOut } = watched;
    // At the time limit the answer is the state then (unless the client has gone: nobody reads it).
    if (timedOut && !closed.aborted) return { json: await this.getJson(p, id), applied: true };
    return { json: g.json, applied: true, tokens: tokensOf(g.row) };
  }

  /** A stream of the render's live events; 404 as getJson, 429 past the streams' bound. */
  async events(p: Principal, id: string, lastEventId: string | string[] | undefined) {
    if (!this.o.streams || !this.o.cache)
      throw new ApiError('SERVICE_UNAVAILABLE', 'This process does not serve live events.', [], {
        'retry-after': '1',
      });
    return openEventStream(
      { streams: this.o.streams, read: (q, i) => this.found(q, i), retryAfterSeconds: 1 },
      p,
      id,
      lastEventId,
    );
  }

  /** Drops the cached copy of a generation known to have changed (before its notification arrives). */
  /**
   * The token counts the backend reported for a text render already read through `p` (a chat
   * answer's own render), or null.
   */
  reportedTokens(id: string): Promise<{ input: number; output: number } | null> {
    return reportedTokens(this.o.db, id);
  }

  forget(id: string): void {
    this.o.cache?.invalidate(id);
  }

  /**
   * getJson() when the answer is in memory now, without waiting; undefined when it is not. The
   * poll's hot path: no promise, no object made (a key's principal is made with its record).
   */
  cachedJson(p: Principal, id: string): string | undefined {
    const g = this.o.cache?.peek(id);
    if (g === undefined || (p.kind !== 'key' && p.kind !== 'member')) return undefined;
    authorize(p, 'renders.view');
    return g.accountId === p.account && (g.mode ?? 'live') === modeOf(p) ? g.json : undefined;
  }

  /** The generation's public JSON, serialised. */
  async getJson(p: Principal, id: string): Promise<string> {
    return (await this.found(p, id)).json;
  }

  /** The stored file of a succeeded render, or the contract's 409/404. */
  async content(p: Principal, id: string) {
    const r = (await this.found(p, id)).row;
    if (r.status === 'queued')
      throw new ApiError(
        'GENERATION_NOT_READY',
        'The render has not finished yet; poll until it has.',
      );
    if (r.status !== 'succeeded' || !r.content_key)
      throw new ApiError('CONTENT_NOT_FOUND', 'This generation has no file.');
    if (r.content_removed_at || (r.expires_at && r.expires_at.getTime() <= Date.now())) {
      throw new ApiError(
        'CONTENT_EXPIRED',
        `The file was removed after it expired at ${r.expires_at?.toISOString() ?? 'its retention time'}.`,
      );
    }
    return {
      key: r.content_key,
      contentType: r.content_type as string,
      bytes: r.content_bytes as number,
      etag: r.content_etag as string,
    };
  }

  /**
   * The account's renders of the principal's mode (a test key's: test ones), newest first; the
   * operator names the account (`account`) and sees its live ones.
   */
  async list(
    p: Principal,
    q: { limit: number; cursor: string | null; status: string | null; modelId: string | null },
    account?: string,
  ): Promise<Page<Record<string, unknown>>> {
    const accountId = accountFor(p, 'renders.view', account);
    const after = q.cursor === null ? null : decodeCursor(q.cursor);
    const rows = await listGenerations(this.o.db, accountId, {
      after,
      status: q.status,
      modelId: q.modelId,
      limit: q.limit + 1,
      mode: modeOf(p),
    });
    const data = rows
      .slice(0, q.limit)
      .map((r) => generationView(r as GenerationRow, this.o.config.publicUrl));
    return {
      data,
      nextCursor: rows.length > q.limit ? encodeCursor(data[data.length - 1].id as string) : null,
    };
  }
}
