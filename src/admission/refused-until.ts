// Refusals a process remembers: a key (a throttle scope, a session, an account over its upload
// quota) refused until a moment, with what it was refused for (`V`), so that the next tries before
// it are refused without asking the database. Bounded (bounded-map.ts): past `max` keys, the
// expired go first, then the oldest (a key forgotten is only asked about again, never wrongly let
// in).
import { BoundedMap } from './bounded-map.ts';

interface Refused<V> {
  t: number;
  v: V;
}

const ended = (e: Refused<unknown>, now: number) => e.t <= now;

export class RefusedUntil<V = undefined> {
  private until: BoundedMap<string, Refused<V>>;
  constructor(max = 10_000) {
    this.until = new BoundedMap<string, Refused<V>>(max, ended);
  }

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
    this.until.set(key, { t: untilMs, v: value as V }, nowMs);
  }

  delete(key: string): void {
    this.until.delete(key);
  }

  get size(): number {
    return this.until.size;
  }
}
