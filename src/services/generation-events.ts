// A render's live events (docs/api.md "Live events of a render"): the generation as it is, then again
// at each change of its status, start or progress, until it is final. Woken by the same change
// notifications as the poll cache and `Prefer: wait` (one LISTEN connection per process), never by
// a polling loop; bounded per process and per account by their own `Waiters`.
//
// Event ids carry what the client last saw, so that `Last-Event-ID` resumes on any process: an id
// is `sequence * 10000 + fingerprint`, where the sequence grows by one per event (ids increase)
// and the fingerprint names the state (status, started, progress to a thousandth). A resumed
// stream sends the current state first exactly when its fingerprint differs from the one the
// client holds.
import { ApiError } from '../domain/errors.ts';
import type { Principal } from '../domain/principal.ts';
import type { Waiters } from '../admission/waiters.ts';
import type { CachedGeneration } from './generation-cache.ts';

export interface GenerationEvent {
  id: number;
  /** The generation's public JSON, as GET /v1/generations/{id} answers it. */
  json: string;
  final: boolean;
}

const SPAN = 10_000;
const STATES = ['waiting', 'running', 'succeeded', 'failed', 'refunded'];

/** The state a client sees in an event, as a number below SPAN. */
export function fingerprint(row: CachedGeneration['row']): number {
  const state = row.status === 'queued' ? (row.started_at ? 'running' : 'waiting') : row.status;
  const p = typeof row.progress === 'number' ? 1 + Math.round(row.progress * 1000) : 0;
  return Math.max(0, STATES.indexOf(state)) * 1002 + Math.min(p, 1001);
}

/** The sequence and fingerprint a `Last-Event-ID` names; undefined when it is not one of ours. */
export function parseEventId(
  v: string | string[] | undefined,
): { seq: number; fp: number } | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined || !/^\d{5,15}$/.test(s.trim())) return undefined;
  const n = Number(s.trim());
  return { seq: Math.floor(n / SPAN), fp: n % SPAN };
}

/** One client's stream of one render: next() until it answers null. */
export class EventStream {
  private seq: number;
  private fp: number | undefined;
  private changed = true;
  private wake: (() => void) | null = null;
  private closed = false;
  private ended = false;
  private release: () => void = () => {};

  constructor(
    private read: () => Promise<CachedGeneration>,
    resume: { seq: number; fp: number } | undefined,
  ) {
    this.seq = resume?.seq ?? 0;
    this.fp = resume?.fp;
  }

  /** Registers its place among the process's streams; false when they are full. */
  hold(streams: Waiters, id: string, accountId: string): boolean {
    const remove = streams.add(id, () => this.notify(), accountId);
    if (!remove) return false;
    this.release = remove;
    return true;
  }

  private notify() {
    this.changed = true;
    this.wake?.();
  }

  /**
   * The next event: at once when the state differs from what the client saw, otherwise at the
   * next change that makes it differ. Null once the stream is over: after the final state, the
   * generation is gone, or close() was called.
   */
  async next(): Promise<GenerationEvent | null> {
    while (!this.closed && !this.ended) {
      if (!this.changed) {
        await new Promise<void>((r) => (this.wake = r));
        this.wake = null;
        continue;
      }
      this.changed = false;
      let g: CachedGeneration;
      try {
        g = await this.read();
      } catch (e) {
        // deleted meanwhile: the stream ends, as a GET would now answer 404
        if (e instanceof ApiError && e.code === 'GENERATION_NOT_FOUND') break;
        throw e;
      }
      if (this.closed) break;
      const final = g.row.status !== 'queued';
      const fp = fingerprint(g.row);
      if (fp === this.fp) {
        if (final) break; // the client already holds the final state
        continue;
      }
      this.fp = fp;
      this.seq++;
      if (final) this.ended = true;
      return { id: this.seq * SPAN + fp, json: g.json, final };
    }
    this.close();
    return null;
  }

  /** Ends the stream and gives its place back (idempotent). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.release();
    this.release = () => {};
    this.wake?.();
  }
}

/**
 * Opens a stream of the principal's render `id`: 404 as GET answers it, 429 RATE_LIMITED when the
 * process holds its most streams, in all or of this account.
 */
export async function openEventStream(
  o: {
    streams: Waiters;
    read: (p: Principal, id: string) => Promise<CachedGeneration>;
    retryAfterSeconds: number;
  },
  p: Principal,
  id: string,
  lastEventId: string | string[] | undefined,
): Promise<EventStream> {
  const first = await o.read(p, id); // throws the 404 of another account's or mode's render
  const s = new EventStream(() => o.read(p, id), parseEventId(lastEventId));
  if (!s.hold(o.streams, id, first.accountId))
    throw new ApiError(
      'RATE_LIMITED',
      'This account holds the most event streams this server keeps open; close one or poll.',
      undefined,
      { 'retry-after': String(o.retryAfterSeconds) },
    );
  return s;
}
