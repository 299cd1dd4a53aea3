// The studio's doors' budget per address (docs/account-limits.md, "The studio's doors"), decided
// in memory before anything else is done for a request at a door (studio/door-budget.ts is its
// hook). Per process: it protects the process's own work on a flood (the attempts behind the doors
// are counted in the database, attempts.ts, and hold across processes).
import { addressKey } from './address.ts';
import { BoundedMap } from './bounded-map.ts';
import type { RefusalPace } from './refusal-pace.ts';

interface Bucket {
  tokens: number;
  atMs: number;
}

/**
 * Requests at the studio's doors (the sign-in, sign-up, reset and link pages, read or posted) per
 * address, in this process: a bucket of `perMinute` requests per address, refilled at `perMinute`
 * a minute. Decided in memory before anything else is done for the request (no cookie or CSRF
 * work, no page, no statement), so a flood from one address costs little; other addresses keep
 * their own buckets, and a person's few requests are far below it. Counted by addressKey (an IPv6
 * /64 as one). At most `max` addresses are held; past that, the full buckets go, then the least
 * recently let in (they start again full).
 */
export class DoorBudget {
  private buckets: BoundedMap<string, Bucket>;
  constructor(
    readonly perMinute: number,
    max = 10_000,
  ) {
    this.buckets = new BoundedMap(max, (b, now) => this.tokens(b, now) >= perMinute);
  }

  private tokens(b: Bucket, nowMs: number): number {
    return Math.min(this.perMinute, b.tokens + ((nowMs - b.atMs) * this.perMinute) / 60_000);
  }

  /** 0 when the request is let in (and counted), else the seconds until one would be. */
  take(ip: string, nowMs = Date.now()): number {
    if (this.perMinute <= 0) return 0;
    const key = addressKey(ip);
    const b = this.buckets.get(key);
    const tokens = b ? this.tokens(b, nowMs) : this.perMinute;
    if (b && tokens < 1) {
      // refused: nothing taken, so a flood never delays the address's next request further
      b.tokens = tokens;
      b.atMs = nowMs;
      return Math.max(1, Math.ceil(((1 - tokens) * 60) / this.perMinute));
    }
    this.buckets.set(key, { tokens: tokens - 1, atMs: nowMs }, nowMs);
    return 0;
  }
}

/**
 * An address's scope for RefusalPace at the doors: the budget's 429 and each door's own throttle
 * (wrong passwords, sign-ups, console tokens) share it, so an address that keeps coming after any
 * of them gets its refusals late, whichever of them refuses it.
 */
export const doorScope = (ip: string) => `door:${addressKey(ip)}`;

/** The pause a door's throttle refusal earns (doorScope), to await before answering its 429. */
export const doorRefusalPause = (pace: RefusalPace, ip: string) => pace.pause(doorScope(ip));
