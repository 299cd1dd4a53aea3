// rg.generations: create, read, list, wait, cancel, delete, and the output file.
import { RendergateError } from './errors.js';
import { paged, type PagedList } from './pages.js';
import { afterLostAnswer, sleep, type Transport } from './transport.js';
import { followEvents } from './events.js';
import type { Deleted, Generation, GenerationStatus, InputsOf, ModelId, Page } from './types.js';

export interface CreateOptions {
  /** Sent as Idempotency-Key; one is made when absent. Reuse it to retry the same create safely. */
  idempotencyKey?: string;
  /** Seconds (1-60) the server may hold the answer until the generation is final (Prefer: wait). */
  wait?: number;
  signal?: AbortSignal;
}

export interface WaitOptions {
  signal?: AbortSignal;
  /** Called with each state seen while waiting (status, progress, queuePosition). */
  onProgress?: (generation: Generation) => void;
  /** Give up after this long: a RendergateError WAIT_TIMEOUT carrying the last state seen. */
  timeoutMs?: number;
}

const FINAL: ReadonlySet<string> = new Set(['succeeded', 'failed', 'refunded']);
export const isFinal = (g: Generation) => FINAL.has(g.status);
/** How long a read may be held when only the final state matters. */
const HOLD_SECONDS = 25;
/**
 * With onProgress: a held read is woken only by the final state, so hold briefly to report progress
 * and queue position as they change (the final state still arrives the moment it happens).
 */
const PROGRESS_HOLD_SECONDS = 2;
const path = (id: string) => `/v1/generations/${encodeURIComponent(id)}`;
const prefer = (wait: number | undefined): Record<string, string> =>
  wait === undefined ? {} : { prefer: `wait=${Math.max(1, Math.min(60, Math.round(wait)))}` };

export class Generations {
  /** False once the server showed it has no live events: waits poll from then on. */
  private events = true;

  constructor(private readonly t: Transport) {}

  /** Starts a render: priced, charged and queued in one step (202). Retries replay the same key, never charge twice. */
  create<M extends ModelId>(
    modelId: M,
    inputs: InputsOf<M>,
    options: CreateOptions = {},
  ): Promise<Generation> {
    const key = options.idempotencyKey ?? crypto.randomUUID();
    return this.t.json<Generation>({
      method: 'POST',
      path: '/v1/generations',
      json: { modelId, inputs },
      idempotent: true,
      signal: options.signal,
      headers: { 'idempotency-key': key, ...prefer(options.wait) },
      holdSeconds: options.wait,
    });
  }

  get(id: string, options: { wait?: number; signal?: AbortSignal } = {}): Promise<Generation> {
    return this.t.json<Generation>({
      method: 'GET',
      path: path(id),
      idempotent: true,
      signal: options.signal,
      headers: prefer(options.wait),
      holdSeconds: options.wait,
    });
  }

  /** Every generation of the account (newest first), across all pages. */
  list(
    filter: {
      status?: GenerationStatus;
      modelId?: string;
      pageSize?: number;
      signal?: AbortSignal;
    } = {},
  ): PagedList<Generation> {
    return paged((cursor) =>
      this.t.json<Page<Generation>>({
        method: 'GET',
        path: '/v1/generations',
        idempotent: true,
        signal: filter.signal,
        query: { status: filter.status, modelId: filter.modelId, limit: filter.pageSize, cursor },
      }),
    );
  }

  /**
   * Resolves once the generation is final (succeeded, failed or refunded), never before. It
   * follows the render's live events (events.ts); when they cannot be had, each read asks the
   * server to hold it until the generation is final (Prefer: wait), and a server that does not
   * hold is polled with a growing interval.
   */
  async wait(id: string, options: WaitOptions = {}): Promise<Generation> {
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    let interval = 250;
    let last: Generation | undefined;
    if (this.events) {
      const followed = await followEvents(this.t, id, {
        signal: options.signal,
        onProgress: options.onProgress,
        deadline,
      });
      if (followed.final) return followed.final;
      if (followed.unavailable) this.events = false;
      last = followed.last;
    }
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new RendergateError({
          status: 0,
          code: 'WAIT_TIMEOUT',
          generation: last,
          message: `Generation ${id} was not final after ${options.timeoutMs} ms.`,
        });
      }
      const hold = Math.max(
        1,
        Math.min(
          options.onProgress ? PROGRESS_HOLD_SECONDS : HOLD_SECONDS,
          Math.floor(left / 1000),
        ),
      );
      const started = Date.now();
      const g = await this.get(id, { wait: hold, signal: options.signal });
      last = g;
      options.onProgress?.(g);
      if (isFinal(g)) return g;
      // Held for a while: the server waits for changes, ask again at once. Answered at once: poll.
      if (Date.now() - started < 500) {
        await sleep(Math.min(interval, Math.max(0, deadline - Date.now())), options.signal);
        interval = Math.min(2_000, interval * 1.5);
      }
    }
  }

  /** Cancels a queued generation: it becomes refunded, its charge returned; the record stays. */
  cancel(id: string, options: { signal?: AbortSignal } = {}): Promise<Generation> {
    return this.t.json<Generation>({
      method: 'POST',
      path: `${path(id)}/cancel`,
      idempotent: true,
      signal: options.signal,
    });
  }

  /** Deletes a generation and its file; a queued one is cancelled and refunded first. */
  async delete(id: string, options: { signal?: AbortSignal } = {}): Promise<Deleted> {
    try {
      return await this.t.json<Deleted>({
        method: 'DELETE',
        path: path(id),
        idempotent: true,
        signal: options.signal,
      });
    } catch (e) {
      // A retry after a lost answer finds it already gone: that is the outcome asked for.
      if (
        e instanceof RendergateError &&
        e.code === 'GENERATION_NOT_FOUND' &&
        afterLostAnswer.has(e)
      ) {
        return { id, deleted: true };
      }
      throw e;
    }
  }

  /** The output file as a streaming Response (Content-Type, Content-Length, ETag); `range` e.g. "bytes=0-1023". */
  content(id: string, options: { range?: string; signal?: AbortSignal } = {}): Promise<Response> {
    return this.t.send({
      method: 'GET',
      path: `${path(id)}/content`,
      idempotent: true,
      signal: options.signal,
      headers: options.range ? { range: options.range } : {},
    });
  }
}
