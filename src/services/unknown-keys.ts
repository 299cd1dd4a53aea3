// Guessing keys costs the guesser, not the database. A well-formed key that is unknown is remembered
// for ten minutes (keys are made here from 32 random bytes: one that is unknown now will not start to
// exist), and an address that sent more than UNKNOWN_KEYS_PER_MINUTE unknown keys in the current minute
// is answered 429 without a lookup until the minute ends. Per process, in memory: it protects this
// process's pool; a key's own limit (rate-limits.ts) is the one that holds across nodes.
import { ApiError } from '../domain/errors.ts';

export const UNKNOWN_KEY_TTL_MS = 10 * 60_000;
export const UNKNOWN_KEYS_PER_MINUTE = 30;
/** Addresses tracked at most; past it the table starts over (an attacker with more addresses gains a minute). */
const MAX_ADDRESSES = 100_000;

export class UnknownKeyLimiter {
  private minute = 0;
  private counts = new Map<string, number>();

  private roll(now: number): void {
    const minute = Math.floor(now / 60_000);
    if (minute !== this.minute || this.counts.size > MAX_ADDRESSES) {
      this.minute = minute;
      this.counts.clear();
    }
  }

  /** Throws 429 when `address` has sent too many unknown keys this minute. */
  check(address: string | undefined, now = Date.now()): void {
    if (address === undefined) return;
    this.roll(now);
    if ((this.counts.get(address) ?? 0) < UNKNOWN_KEYS_PER_MINUTE) return;
    const retry = Math.max(1, Math.ceil(((this.minute + 1) * 60_000 - now) / 1000));
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
    this.roll(now);
    this.counts.set(address, (this.counts.get(address) ?? 0) + 1);
  }
}
