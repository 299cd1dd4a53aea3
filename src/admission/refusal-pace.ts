// Refusals that keep coming (docs/account-limits.md "Refusals that keep coming"): a client refused
// again and again for the same reason (a key past its rate limit, an account past its upload
// quota, a session past its limit, an address past the studio doors' budget or their throttles)
// gets its first refusals at once and, past them, each one a second late. A client that honours
// Retry-After, or stops, never waits. One that loops on refusals makes about one request a second
// per connection, so a flood costs the server a timer a refusal instead of a refusal as fast as it
// can send them, and the CPU it would have taken stays with everyone else's requests. Per process,
// in memory, bounded: at most MAX_HELD answers held at once (past it, refusals are answered at
// once again) and MAX_SCOPES scopes remembered (past it, the scopes whose burst is whole again go,
// then the least recently refused, and start again with their burst: bounded-map.ts).
import { BoundedMap } from './bounded-map.ts';

/**
 * Refusals of one scope answered at once in a burst, refilled at PER_SECOND; the defaults of
 * RENDERGATE_REFUSAL_PACE_BURST and RENDERGATE_REFUSAL_PACE_MS.
 */
export const PACE_BURST = 20;
export const PACE_PER_SECOND = 0.2;
/** How late a refusal past the burst is answered (0: never late). */
export const PACE_DELAY_MS = 1_000;
const MAX_HELD = 1_024;
const MAX_SCOPES = 10_000;

export interface PaceOptions {
  burst: number;
  perSecond: number;
  delayMs: number;
  maxHeld: number;
  maxScopes: number;
}

interface Bucket {
  tokens: number;
  atMs: number;
}

export class RefusalPace {
  private buckets: BoundedMap<string, Bucket>;
  private holding = 0;
  private readonly o: PaceOptions;

  constructor(o: Partial<PaceOptions> = {}) {
    this.o = {
      burst: PACE_BURST,
      perSecond: PACE_PER_SECOND,
      delayMs: PACE_DELAY_MS,
      maxHeld: MAX_HELD,
      maxScopes: MAX_SCOPES,
      ...o,
    };
    this.buckets = new BoundedMap(
      this.o.maxScopes,
      (b, now) => this.tokens(b, now) >= this.o.burst,
    );
  }

  private tokens(b: Bucket, nowMs: number): number {
    return Math.min(this.o.burst, b.tokens + ((nowMs - b.atMs) * this.o.perSecond) / 1000);
  }

  /**
   * Counts a refusal of `scope`: 0 when it is answered at once (within the scope's burst, or with
   * MAX_HELD answers already held), else how many milliseconds to hold it.
   */
  delay(scope: string, nowMs = Date.now()): number {
    const b = this.buckets.get(scope);
    const tokens = b ? this.tokens(b, nowMs) : this.o.burst;
    const now = tokens >= 1 || this.o.delayMs === 0 || this.holding >= this.o.maxHeld;
    // most recently refused last, so that the least recently refused are forgotten first
    this.buckets.set(scope, { tokens: tokens >= 1 ? tokens - 1 : tokens, atMs: nowMs }, nowMs);
    return now ? 0 : this.o.delayMs;
  }

  /** Answers `scope`'s refusal: `answer` runs now, or once the refusal's pause is over. */
  later(scope: string, answer: () => void): void {
    const paused = this.pause(scope);
    if (paused) void paused.then(answer);
    else answer();
  }

  /** The pause `scope`'s refusal earns, as a promise to await before refusing; undefined when none. */
  pause(scope: string): Promise<void> | undefined {
    const ms = this.delay(scope);
    if (ms === 0) return undefined;
    this.holding++;
    return new Promise((resolve) =>
      setTimeout(() => {
        this.holding--;
        resolve();
      }, ms),
    );
  }

  /** Refusals held now. */
  get held(): number {
    return this.holding;
  }
}
