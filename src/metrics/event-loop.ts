// Watches this process's own event loop. A loop blocked for seconds (a renderer that computes on the main
// thread, a runaway synchronous call) stops heartbeats, timers and every request at once; the worker must
// not take more renders while that is happening, and the operator must see it (/readyz, /metrics).
//
// A tick every TICK_MS records when the loop last turned, so stalledNow() tells a caller running right
// after a block (the claim loop, woken by the same turn) that the loop was just away. A long gap counts
// as a stall only when the loop was busy through it (perf_hooks' event-loop utilization): on a machine
// so loaded that the process waits for a CPU, the gap is idle time, the process is not at fault, and
// pausing its claims would only slow everything further.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

const TICK_MS = 100;

export interface StallState {
  stalled: boolean;
  lastStallMs: number;
  sinceStallMs: number | null;
}

export class EventLoopWatch {
  private timer: NodeJS.Timeout;
  private lastTick = performance.now();
  private lastElu: EventLoopUtilization = performance.eventLoopUtilization();
  private lastStallAt: number | null = null;
  private lastStallMs = 0;

  /**
   * `thresholdMs`: a delay this long counts as a stall; `coolDownMs`: the loop counts as stalled until
   * it has turned without one for this long.
   */
  // Two seconds: far past any pause of a healthy process (a major GC, a moment without a CPU on a
  // loaded machine), far short of the 15 s lease a stall would let lapse.
  constructor(
    readonly thresholdMs = 2_000,
    readonly coolDownMs = 5_000,
  ) {
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  private tick(): void {
    this.check(performance.now());
    this.lastTick = performance.now();
    this.lastElu = performance.eventLoopUtilization();
  }

  /** Notes a stall when the loop has not turned for the threshold and was busy, not waiting, meanwhile. */
  private check(now: number): void {
    const gap = now - this.lastTick - TICK_MS;
    if (gap < this.thresholdMs) return;
    if (
      performance.eventLoopUtilization(performance.eventLoopUtilization(), this.lastElu)
        .utilization >= 0.5
    )
      this.noteStall(now, gap);
  }

  private noteStall(now: number, ms: number): void {
    this.lastStallAt = now;
    this.lastStallMs = Math.round(ms);
  }

  /** True while the loop was blocked past the threshold within the cool-down, including right now. */
  stalledNow(): boolean {
    const now = performance.now();
    this.check(now);
    return this.lastStallAt !== null && now - this.lastStallAt < this.coolDownMs;
  }

  state(): StallState {
    const stalled = this.stalledNow();
    return {
      stalled,
      lastStallMs: this.lastStallMs,
      sinceStallMs:
        this.lastStallAt === null ? null : Math.round(performance.now() - this.lastStallAt),
    };
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
