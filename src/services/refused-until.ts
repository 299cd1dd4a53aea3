// Refusals a process remembers: a key (a throttle scope, a session, an account over its upload quota)
// refused until a moment, with what it was refused for (`V`), so that the next tries before it are
// refused without asking the database. Bounded: past `max` keys, the expired go first, then the oldest
// (a key forgotten is only asked about again, never wrongly let in).
export class RefusedUntil<V = undefined> {
  private until = new Map<string, { t: number; v: V }>();
  constructor(private max = 10_000) {}

  /** Milliseconds left of `key`'s refusal, 0 when it has none (an expired one is dropped). */
  left(key: string, nowMs = Date.now()): number {
    const e = this.until.get(key);
    if (e === undefined) return 0;
    if (e.t > nowMs) return e.t - nowMs;
    this.until.delete(key);
    return 0;
  }

  /** What `key` was refused for, while its refusal lasts; undefined when it has none. */
  get(key: string, nowMs = Date.now()): V | undefined {
    return this.left(key, nowMs) > 0 ? this.until.get(key)!.v : undefined;
  }

  set(key: string, untilMs: number, nowMs = Date.now(), value?: V): void {
    this.until.delete(key);
    this.until.set(key, { t: untilMs, v: value as V });
    if (this.until.size <= this.max) return;
    for (const [k, e] of this.until) if (e.t <= nowMs) this.until.delete(k);
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
