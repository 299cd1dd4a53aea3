// Watches this process's own event loop. A loop blocked for seconds (a renderer that computes on the main
// thread, a runaway synchronous call) stops heartbeats, timers and every request at once; the worker must
// not take more renders while that is happening, and the operator must see it (/readyz, /metrics).
//
// Two measures, because a blocked loop cannot run the code that would notice: a tick every TICK_MS
// records when the loop last turned, so stalledNow() tells a caller running right after a block (the
// claim loop, woken by the same turn) that the loop was just away; and perf_hooks' event-loop-delay
// histogram, read each tick, gives the worst delay of the recent past for the reports.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

const TICK_MS = 100;

export interface StallState { stalled: boolean; lastStallMs: number; sinceStallMs: number | null }

export class EventLoopWatch {
  private histogram: IntervalHistogram;
  private timer: NodeJS.Timeout;
  private lastTick = performance.now();
  private lastStallAt: number | null = null;
  private lastStallMs = 0;

  /**
   * `thresholdMs`: a delay this long counts as a stall; `coolDownMs`: the loop counts as stalled until
   * it has turned without one for this long.
   */
  constructor(readonly thresholdMs = 1_000, readonly coolDownMs = 5_000) {
    this.histogram = monitorEventLoopDelay({ resolution: 20 });
    this.histogram.enable();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  private tick(): void {
    const now = performance.now();
    const gap = now - this.lastTick - TICK_MS;
    const worst = Math.max(gap, this.histogram.max / 1e6);
    this.histogram.reset();
    this.lastTick = now;
    if (worst >= this.thresholdMs) this.noteStall(now, worst);
  }

  private noteStall(now: number, ms: number): void {
    this.lastStallAt = now;
    this.lastStallMs = Math.round(ms);
  }

  /** True while the loop was blocked past the threshold within the cool-down, including right now. */
  stalledNow(): boolean {
    const now = performance.now();
    const gap = now - this.lastTick - TICK_MS;
    if (gap >= this.thresholdMs) this.noteStall(now, gap);
    return this.lastStallAt !== null && now - this.lastStallAt < this.coolDownMs;
  }

  state(): StallState {
    const stalled = this.stalledNow();
    return { stalled, lastStallMs: this.lastStallMs, sinceStallMs: this.lastStallAt === null ? null : Math.round(performance.now() - this.lastStallAt) };
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}
