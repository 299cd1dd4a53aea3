// Generations recently read, kept in memory so that a client polling one answers without the database.
//
// Kept correct by the database: a trigger (migrations/005, 008) notifies GENERATION_CHANGED_CHANNEL with the
// id whenever an update changes anything a client can see (status, money, output, deletion), from any
// process, and every process drops its copy when the notification arrives. The cache serves only while
// its LISTEN connection is up; when the connection drops it is emptied and bypassed until it is back,
// since notifications sent meanwhile are lost.
//
// Consistency: a write made through this process (a DELETE, an operator refund) drops its copy before it
// answers, so a client reads its own writes. A change made elsewhere (a worker finishing, another API
// node) is seen here once its notification arrives, about a millisecond after its commit: the same as
// reading a moment earlier. A read that was under way when a notification for its id arrived is not
// kept, since it may predate the change.
import { CacheListener } from '../db/listener.ts';
import { GENERATION_CHANGED_CHANNEL } from '../db/channels.ts';
import type { GenerationRow } from './generation-view.ts';

export interface CachedGeneration {
  row: GenerationRow;
  accountId: string;
  /** Its key mode: test renders are seen by test keys only (absent: live). */
  mode?: 'live' | 'test';
  /** The generation's public JSON, serialised once. */
  json: string;
  /**
   * performance.now() after which the entry is not served: set on renders still waiting to start, whose
   * queue position changes without any change to their own row (no notification says so).
   */
  staleAt?: number;
}

interface Read {
  dirty: boolean;
  result: Promise<CachedGeneration | null>;
}

export class GenerationCache {
  private entries = new Map<string, CachedGeneration>();
  private reads = new Map<string, Read>();
  private listener: CacheListener;

  /** Told of every change notification (the `Prefer: wait` waiters); with null after a reconnect, when any id may have changed. */
  onChange: (id: string | null) => void = () => {};

  constructor(
    databaseUrl: string,
    private maxEntries: number,
    log: (msg: string) => void,
  ) {
    this.listener = new CacheListener(
      databaseUrl,
      [GENERATION_CHANGED_CHANNEL],
      (_ch, id) => {
        this.invalidate(id);
        this.onChange(id);
      },
      () => this.clear(),
      log,
      () => this.onChange(null),
    );
  }

  start(): Promise<void> {
    return this.listener.start();
  }

  stop(): Promise<void> {
    return this.listener.stop();
  }

  /** The generation `id` if it is in memory now. */
  peek(id: string): CachedGeneration | undefined {
    const hit = this.entries.get(id);
    if (hit?.staleAt !== undefined && performance.now() > hit.staleAt) {
      this.entries.delete(id);
      return undefined;
    }
    return hit;
  }

  /**
   * The generation `id`, from memory or through `load` (null: not found, never kept). Concurrent
   * requests for one id share one read, unless a change arrived while it was under way.
   */
  async get(
    id: string,
    load: (id: string) => Promise<CachedGeneration | null>,
  ): Promise<CachedGeneration | null> {
    const hit = this.peek(id);
    if (hit) return hit;
    const pending = this.reads.get(id);
    if (pending && !pending.dirty) return pending.result;
    if (!this.listener.listening) return load(id);
    const read: Read = { dirty: false, result: load(id) };
    this.reads.set(id, read);
    try {
      const value = await read.result;
      if (value && !read.dirty && this.listener.listening) this.keep(id, value);
      return value;
    } finally {
      if (this.reads.get(id) === read) this.reads.delete(id);
    }
  }

  /** Drops `id` (its row changed); a read under way for it is not kept. */
  invalidate(id: string): void {
    this.entries.delete(id);
    const read = this.reads.get(id);
    if (read) read.dirty = true;
  }

  private keep(id: string, value: CachedGeneration) {
    if (this.entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(id, value);
  }

  private clear() {
    this.entries.clear();
    for (const read of this.reads.values()) read.dirty = true;
  }
}
