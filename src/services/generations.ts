// Use cases of renders: create (price + charge + enqueue in one transaction), read, list, delete
// (cancel and refund a queued one), and the operator refund.
import crypto from 'node:crypto';
import type { Config } from '../config.ts';
import { transaction, type Db, type Tx } from '../db/pool.ts';
import {
  accountOfGeneration,
  forgetContent,
  generationRow,
  listGenerations,
  liveGeneration,
  lockOwnGeneration,
  markGenerationDeleted,
  replayRow,
} from '../db/generations.ts';
import { notify, CANCEL_CHANNEL } from '../db/channels.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import { ApiError } from '../domain/errors.ts';
import { parseRenderRequest } from '../domain/inputs.ts';
import { priceOf } from '../domain/pricing.ts';
import { isId, newId } from '../domain/ids.ts';
import { objectBody } from '../domain/body.ts';
import type { Storage } from '../storage/storage.ts';
import { generationView, type GenerationRow } from './generation-view.ts';
import type { Uploads } from './uploads.ts';
import type { Waiters } from './waiters.ts';
import type { KeyMode, KeyRecord } from './keys.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';
import { unlessBackingUp } from '../db/backup-lock.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { CachedGeneration, GenerationCache } from './generation-cache.ts';
import type { AfterCommitNotifier } from '../db/notify-after-commit.ts';
import type { Ledger } from './ledger.ts';
import type { ChatMessage } from '../domain/chat.ts';
import { asks, INSUFFICIENT_MARK, type TestRenders } from '../queue/test-render.ts';
import { isSharedTestOutput } from '../queue/test-stored.ts';
import { refusal } from './refusal.ts';
import { currentTraceParent, inSpan } from '../tracing/trace.ts';

/** How long a test render may stay queued before the janitor ends it (its process died first). */
const TEST_DEADLINE_SECONDS = 120;

/** How long a poll may be answered from memory while its render waits to start (its queue position moves). */
const WAITING_FRESH_MS = 1_000;

export interface Created {
  body: Record<string, unknown>;
  location: string;
  replayed: boolean;
}

/**
 * Who pays for a create: an API key, or (id null) the account itself in the studio, with no daily cap.
 * A test key (`mode` 'test') pays nothing; without `mode` the payer is live.
 */
export type Payer = Pick<KeyRecord, 'accountId' | 'dailyCapCents'> & {
  id: string | null;
  mode?: KeyMode;
};

/** Canonical JSON (sorted keys) so that the same body always hashes the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export interface GenerationsOptions {
  db: Db;
  catalog: Catalog;
  config: Config;
  storage: Storage;
  /** Charges and refunds (services/ledger.ts). */
  ledger: Ledger;
  metrics?: Metrics;
  /** Makes the results of test keys' renders (API processes). */
  testRenders?: TestRenders;
  /** Polls answered from memory (API processes). */
  cache?: GenerationCache;
  /** Wakes workers after a create. */
  jobs?: AfterCommitNotifier;
  uploads?: Uploads;
  /** `Prefer: wait` requests. */
  waiters?: Waiters;
}

export class Generations {
  private db: Db;
  private catalog: Catalog;
  private config: Config;
  private storage: Storage;
  private ledger: Ledger;
  private metrics?: Metrics;
  private cache?: GenerationCache;
  private jobs?: AfterCommitNotifier;
  private uploads?: Uploads;
  private waiters?: Waiters;
  private testRenders?: TestRenders;

  constructor(o: GenerationsOptions) {
    ({
      db: this.db,
      catalog: this.catalog,
      config: this.config,
      storage: this.storage,
      ledger: this.ledger,
    } = o);
    ({
      metrics: this.metrics,
      cache: this.cache,
      jobs: this.jobs,
      uploads: this.uploads,
      waiters: this.waiters,
    } = o);
    this.testRenders = o.testRenders;
  }

  /** Quote and create: image inputs given as upload addresses must be uploads of this account, still kept. */
  async checkUploads(
    accountId: string,
    model: Parameters<Uploads['uploadInputs']>[0],
    inputs: Parameters<Uploads['uploadInputs']>[1],
  ) {
    const named = this.uploads?.uploadInputs(model, inputs);
    if (named && named.size > 0) await this.uploads!.checkInputs(accountId, named);
  }

  private location(id: string) {
    return `${this.config.publicUrl}/v1/generations/${id}`;
  }

  /** `opts.messages`: a chat request's conversation (/openai/v1), stored with the render; idempotency covers it. */
  async create(
    key: Payer,
    body: unknown,
    idempotencyKey: string,
    { messages }: { messages?: ChatMessage[] } = {},
  ): Promise<Created> {
    const { model, inputs } = parseRenderRequest(this.catalog, objectBody(body));
    const cost = priceOf(model, inputs);
    await this.checkUploads(key.accountId, model, inputs);
    const requestHash = crypto
      .createHash('sha256')
      .update(canonical(messages ? { body, messages } : body))
      .digest();
    const def = model.def;
    const id = newId('gen');
    const mode = key.mode ?? 'live';
    const test = mode === 'test';
    // The create's span: its traceparent goes on the row, the worker's spans' parent (docs/operations.md).
    const span = { attributes: { 'rendergate.generation_id': id, 'rendergate.model_id': def.id } };
    const made = await inSpan('generation.create', span, () =>
      this.ledger.charge(
        {
          id,
          ledgerId: newId('led'),
          accountId: key.accountId,
          keyId: key.id,
          idempotencyKey,
          requestHash,
          modelId: def.id,
          inputs,
          cost,
          dailyCapCents: key.dailyCapCents,
          mode,
          short: test && asks(inputs, INSUFFICIENT_MARK),
          deadlineSeconds: test
            ? TEST_DEADLINE_SECONDS
            : def.timeLimitSeconds * def.maxAttempts + 3600,
          traceParent: currentTraceParent(),
        },
        messages,
      ),
    );
    switch (made.outcome) {
      case 'refused':
        throw await refusal(this.db, this.config.dayTimeZone, {
          key,
          cost,
          short: test && asks(inputs, INSUFFICIENT_MARK),
        });
      case 'in_use':
        throw new ApiError(
          'IDEMPOTENCY_KEY_IN_USE',
          'A request with this Idempotency-Key is still being processed; retry shortly.',
        );
      case 'reused':
        throw new ApiError(
          'IDEMPOTENCY_KEY_REUSED',
          'This Idempotency-Key was used before with a different body.',
        );
      case 'replayed':
        return {
          body: await this.createdView(made.generation_id!),
          location: this.location(made.generation_id!),
          replayed: true,
        };
      case 'created':
        if (test) {
          // Made by this process at once (no worker, no backend); first in no queue.
          this.testRenders?.start({ id, modelId: def.id, inputs: made.inputs as typeof inputs });
        } else {
          this.jobs?.send('created');
          this.metrics?.chargedCents.inc(cost);
        }
        return {
          body: this.queuedView({
            id,
            model_id: def.id,
            inputs: made.inputs!,
            cost_cents: cost,
            created_at: made.created_at!,
            queue_position: test ? 1 : made.queue_position,
            mode,
          }),
          location: this.location(id),
          replayed: false,
        };
    }
  }

  /** The 202 body of a create: the generation as it was then, queued with nothing refunded. */
  private queuedView(
    g: Pick<
      GenerationRow,
      'id' | 'model_id' | 'inputs' | 'cost_cents' | 'created_at' | 'queue_position' | 'mode'
    >,
  ) {
    return generationView(
      {
        ...g,
        status: 'queued',
        refunded_cents: 0,
        content_key: null,
        content_type: null,
        text_output: null,
        error_code: null,
        error_message: null,
        started_at: null,
        completed_at: null,
      },
      this.config.publicUrl,
    );
  }

  /**
   * A replay's 202 body, rebuilt from its generation, its queue position included: the renders of its
   * model created before it and neither started nor finished at its creation, read from their times
   * (a replay is rare; the scan is bounded to the rows created shortly before it).
   */
  private async createdView(id: string) {
    return this.queuedView((await replayRow(this.db, id)) as GenerationRow);
  }

  /** The generation `id` of this account and mode (test keys see test renders only), from the cache when it has it. */
  private async found(accountId: string, id: string, mode: KeyMode): Promise<CachedGeneration> {
    if (!isId('gen', id)) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    const g = this.cache ? await this.cache.get(id, this.load) : await this.load(id);
    if (!g || g.accountId !== accountId || (g.mode ?? 'live') !== mode)
      throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    return g;
  }

  /** Reads a generation for found() (a field, so that a poll creates no closure). */
  private load = async (id: string): Promise<CachedGeneration | null> => {
    const row = (await liveGeneration(this.db, id)) as
      (GenerationRow & { account_id: string; mode: KeyMode }) | null;
    if (!row) return null;
    // A render waiting to start moves up the queue without its own row changing: its copy is kept briefly.
    const staleAt =
      row.status === 'queued' && !row.started_at ? performance.now() + WAITING_FRESH_MS : undefined;
    return {
      row,
      accountId: row.account_id,
      mode: row.mode,
      json: JSON.stringify(generationView(row, this.config.publicUrl)),
      staleAt,
    };
  };

  /**
   * The generation's JSON once it is final, or when `seconds` have passed, or when `closed` fires (the
   * client went away), whichever comes first. `applied` is false when the process already holds its
   * most waiting requests: the answer is then the current state, at once.
   */
  async waitJson(
    accountId: string,
    id: string,
    seconds: number,
    closed: AbortSignal,
    mode: KeyMode = 'live',
  ): Promise<{ json: string; applied: boolean }> {
    if (!this.waiters || !this.cache)
      return { json: await this.getJson(accountId, id, mode), applied: false };
    let changed = false;
    let wake: (() => void) | null = null;
    const remove = this.waiters.add(id, () => {
      changed = true;
      wake?.();
    });
    if (!remove) return { json: await this.getJson(accountId, id, mode), applied: false };
    let timer: NodeJS.Timeout | undefined;
    const over = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, seconds * 1000);
      closed.addEventListener('abort', () => resolve(), { once: true });
    });
    try {
      for (;;) {
        changed = false;
        const g = await this.found(accountId, id, mode);
        if (g.row.status !== 'queued' || closed.aborted) return { json: g.json, applied: true };
        if (changed) continue; // changed while it was read: read again
        const woken = await Promise.race([
          new Promise<boolean>((r) => {
            wake = () => r(true);
          }),
          over.then(() => false),
        ]);
        wake = null;
        if (!woken)
          return {
            json: closed.aborted ? g.json : await this.getJson(accountId, id, mode),
            applied: true,
          };
      }
    } finally {
      clearTimeout(timer);
      remove();
    }
  }

  /** Drops the cached copy of a generation known to have changed (before its notification arrives). */
  forget(id: string): void {
    this.cache?.invalidate(id);
  }

  /** getJson() when the answer is in memory now, without waiting; undefined when it is not. */
  cachedJson(accountId: string, id: string, mode: KeyMode = 'live'): string | undefined {
    const g = this.cache?.peek(id);
    return g && g.accountId === accountId && (g.mode ?? 'live') === mode ? g.json : undefined;
  }

  /** The generation's public JSON, serialised. */
  async getJson(accountId: string, id: string, mode: KeyMode = 'live'): Promise<string> {
    return (await this.found(accountId, id, mode)).json;
  }

  /** The stored file of a succeeded render, or the contract's 409/404. */
  async content(accountId: string, id: string, mode: KeyMode = 'live') {
    const r = (await this.found(accountId, id, mode)).row;
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

  /** The account's renders of one mode (live unless `q.mode` says test), newest first. */
  async list(
    accountId: string,
    q: {
      limit: number;
      cursor: string | null;
      status: string | null;
      modelId: string | null;
      mode?: KeyMode;
    },
  ): Promise<Page<Record<string, unknown>>> {
    const after = q.cursor === null ? null : decodeCursor(q.cursor);
    const rows = await listGenerations(this.db, accountId, {
      after,
      status: q.status,
      modelId: q.modelId,
      limit: q.limit + 1,
      mode: q.mode,
    });
    const data = rows
      .slice(0, q.limit)
      .map((r) => generationView(r as GenerationRow, this.config.publicUrl));
    return {
      data,
      nextCursor: rows.length > q.limit ? encodeCursor(data[data.length - 1].id as string) : null,
    };
  }

  /**
   * Cancels a render (docs/api.md "Cancel"): a queued one, waiting or running, becomes refunded with its
   * charge returned, in the same guarded transition DELETE uses, and whichever worker runs it is told to
   * stop. A refunded one is answered unchanged; a succeeded or failed one is 409.
   */
  async cancel(
    accountId: string,
    id: string,
    mode: KeyMode = 'live',
  ): Promise<Record<string, unknown>> {
    if (!isId('gen', id)) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    const { row, refunded } = await transaction(this.db, async (tx) => {
      const { status, refunded: cents } = await this.cancelLocked(tx, accountId, id, mode);
      if (status === 'succeeded' || status === 'failed') {
        throw new ApiError(
          'GENERATION_NOT_CANCELLABLE',
          `Only a queued render can be cancelled; this one is ${status}.`,
          [{ status }],
        );
      }
      return { row: (await generationRow(tx, id)) as GenerationRow, refunded: cents };
    });
    this.cache?.invalidate(id);
    if (refunded) this.metrics?.refundedCents.inc(refunded);
    return generationView(row, this.config.publicUrl);
  }

  /**
   * Cancel and DELETE share this: under the row's lock, a queued render becomes refunded with its charge
   * returned (one guarded transition; the money moves once) and the worker running it, on any node, is
   * told to stop. Returns the row's status before, its file key, and the cents returned (null: none).
   */
  private async cancelLocked(
    tx: Tx,
    accountId: string,
    id: string,
    mode: KeyMode,
  ): Promise<{ status: string; contentKey: string | null; refunded: number | null }> {
    const row = await lockOwnGeneration(tx, accountId, id, mode);
    if (!row) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    let refunded: number | null = null;
    if (row.status === 'queued') {
      refunded = await this.ledger.refund(tx, id, 'queued', {
        status: 'refunded',
        code: 'CANCELLED',
        message: 'The render was cancelled by its owner.',
      });
      await notify(tx, CANCEL_CHANNEL, id);
    }
    return { status: row.status, contentKey: row.content_key, refunded };
  }

  /** Deletes a render; a queued (waiting or running) one is cancelled and refunded in the same step. */
  async delete(accountId: string, id: string, mode: KeyMode = 'live') {
    if (!isId('gen', id)) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    const { contentKey, refunded } = await transaction(this.db, async (tx) => {
      const was = await this.cancelLocked(tx, accountId, id, mode);
      await markGenerationDeleted(tx, id);
      return was;
    });
    this.cache?.invalidate(id);
    if (refunded) this.metrics?.refundedCents.inc(refunded);
    if (contentKey) await this.purgeContent(id, contentKey);
    return { id, deleted: true };
  }

  /** Removes a file no longer served; the janitor retries whatever a crash or a running backup left behind. */
  async purgeContent(id: string, key: string) {
    await unlessBackingUp(this.db, async (tx) => {
      // A test output other rows may name too is the orphan sweep's to remove (queue/test-stored.ts).
      if (!isSharedTestOutput(key)) await this.storage.delete(key);
      await forgetContent(tx, id, key);
    });
    this.cache?.invalidate(id);
  }

  async adminRefund(id: string) {
    const row = await transaction(this.db, async (tx) => {
      const ok = await this.ledger.refund(tx, id, 'succeeded', {
        status: 'refunded',
        code: 'REFUNDED_BY_OPERATOR',
        message: 'The charge was returned by the operator.',
      });
      const row = await generationRow(tx, id);
      if (!row || row.deleted_at) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
      if (ok === null) {
        throw new ApiError(
          'GENERATION_NOT_REFUNDABLE',
          `Only a succeeded render can be refunded; this one is ${row.status as string}.`,
        );
      }
      this.metrics?.refundedCents.inc(ok);
      return row as GenerationRow;
    });
    this.cache?.invalidate(id);
    if (row.content_key) await this.purgeContent(id, row.content_key).catch(() => undefined);
    return generationView({ ...row, content_key: null }, this.config.publicUrl);
  }

  /** The account of a generation, deleted or not (the operator's console); null when there is none. */
  async accountOf(id: string): Promise<string | null> {
    return isId('gen', id) ? accountOfGeneration(this.db, id) : null;
  }
}
