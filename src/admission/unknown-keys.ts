// Guessing keys costs the guesser, not the database. A well-formed key that is unknown is
// remembered for ten minutes (keys are made here from 32 random bytes: one that is unknown now
// will not start to exist), and an address that sent more than UNKNOWN_KEYS_PER_MINUTE unknown
// keys in the current minute is answered 429 without a lookup until the minute ends. Per process,
// in memory: it protects this process's pool; a key's own limit (rate-limits.ts) is the one that
// holds across nodes.
import { ApiError } from '../domain/errors.ts';
import { BoundedMap } from './bounded-map.ts';

export const UNKNOWN_KEY_TTL_MS = 10 * 60_000;
export const UNKNOWN_KEYS_PER_MINUTE = 30;
/**
 * Addresses tracked at most; past it, those counted in an earlier minute go, then the least
 * recently counted (one forgotten starts the minute again at 0).
 */
const MAX_ADDRESSES = 100_000;

interface Count {
  minute: number;
  n: number;
}

const minuteOf = (ms: number) => Math.floor(ms / 60_000);

export class UnknownKeyLimiter {
  private counts = new BoundedMap<string, Count>(
    MAX_ADDRESSES,
    (c, now) => c.minute !== minuteOf(now),
  );

  /** Unknown keys `address` sent in the minute of `now`. */
  private sent(address: string, now: number): number {
    const c = this.counts.get(address);
    return c !== undefined && c.minute === minuteOf(now) ? c.n : 0;
  }

  /** Throws 429 when `address` has sent too many unknown keys this minute. */
  check(address: string | undefined, now = Date.now()): void {
    if (address === undefined) return;
    if (this.sent(address, now) < UNKNOWN_KEYS_PER_MINUTE) return;
    const retry = Math.max(1, Math.ceil(((minuteOf(now) + 1) * 60_000 - now) / 1000));
    throw new ApiError(
      'RATE_LIMITED',
      `Too many unknown API keys from this address; retry after ${retry} s.`,
      undefined,
      { 'retry-after': String(retry) },
    );
  }

  /** Records an unknown key sent from `address`. */
  note(address: string | undefined, now = Date.now()): void {
    if (address === undefined) return;
    this.counts.set(address, { minute: minuteOf(now), n: this.sent(address, now) + 1 }, now);
  }
}
