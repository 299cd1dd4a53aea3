// Refusals a process remembers: a key (a throttle scope, a session) refused until a moment, so that the
// next tries before it are refused without asking the database. Bounded: past `max` keys, the expired
// go first, then the oldest (a key forgotten is only asked about again, never wrongly let in).
export class RefusedUntil {
  private until = new Map<string, number>();
  constructor(private max = 10_000) {}

  /** Milliseconds left of `key`'s refusal, 0 when it has none (an expired one is dropped). */
  left(key: string, nowMs = Date.now()): number {
    const t = this.until.get(key);
    if (t === undefined) return 0;
    if (t > nowMs) return t - nowMs;
    this.until.delete(key);
    return 0;
  }

  set(key: string, untilMs: number, nowMs = Date.now()): void {
    this.until.delete(key);
    this.until.set(key, untilMs);
    if (this.until.size <= this.max) return;
    for (const [k, t] of this.until) if (t <= nowMs) this.until.delete(k);
    for (const k of this.until.keys()) {
      if (this.until.size <= this.max) break;
      this.until.delete(k);
    }
  }

  delete(key: string): void {
    this.until.delete(key);
  }

  get size(): number {
    return this.until.size;
  }
}
