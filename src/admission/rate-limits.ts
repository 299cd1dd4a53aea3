// Per-key request limits in fixed one-minute windows (aligned to the clock's minutes), shared by
// every process on the database without a database write per request.
//
// The count of a key's window lives in Postgres (rate_windows). A process does not spend from it
// one request at a time: it takes a lease of several requests with one guarded statement that
// never grants past the limit, and spends the lease in memory. Leases start at one request and
// double with each refill in a window, up to ⌈limit/64⌉, so a quiet key is counted exactly and a
// busy one costs one statement per ⌈limit/64⌉ requests.
//
// What this guarantees, on any number of processes: never more than `limit` requests admitted in a
// window (grants are taken from the shared count before they are spent). With one process it is
// exact. With N processes serving one key, a lease a process took and did not spend before the
// window ended is lost to the others, so at worst (N − 1)·⌈limit/64⌉ fewer requests are admitted
// (1.6 % of the limit per extra process); for limits up to 64 a minute every lease is one request
// and the limit is exact everywhere.
//
// An account with several live keys also has a bucket its keys share (consumeKey), of the highest
// limit among them: a hundred keys made at the owner's ceiling take no more together than one of
// them.
import type { Db } from '../db/pool.ts';
import { leaseWindow } from '../db/rate-windows.ts';
import { ApiError } from '../domain/errors.ts';
import { BoundedMap } from './bounded-map.ts';

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  /** Refused by the limit the account's keys share (consumeKey), not the key's own. */
  ofAccount?: boolean;
}

/** What consumeKey needs of a key (services/keys.ts KeyRecord). */
export interface LimitedKey {
  id: string;
  accountId: string;
  rateLimitPerMinute: number;
  /** Its account's live keys and the highest limit among them, when it was looked up. */
  account?: { liveKeys: number; rateLimitPerMinute: number };
}

/** The bucket an account's keys share, when it has more than one live key. */
function accountBucket(key: LimitedKey): { id: string; limit: number } | null {
  if (!key.account || key.account.liveKeys <= 1) return null;
  return { id: `keys:${key.accountId}`, limit: key.account.rateLimitPerMinute };
}

/** The 429 of a key over its limit, or over the one its account's keys share. */
export function overLimit(d: LimitDecision): ApiError {
  const on = d.ofAccount ? "this account's keys together" : 'this key';
  return new ApiError(
    'RATE_LIMITED',
    `More than ${d.limit} requests a minute on ${on}; retry after ${d.resetSeconds} s.`,
    undefined,
    { 'retry-after': String(d.resetSeconds) },
  );
}

/** Both allowed: the key's decision, with what is left of the tighter one. */
const both = (own: LimitDecision, all: LimitDecision): LimitDecision => ({
  ...own,
  remaining: Math.min(own.remaining, all.remaining),
});

const WINDOW_MS = 60_000;
/** The largest lease is this fraction of the limit. */
const LEASE_FRACTION = 64;
/** Keys and accounts whose windows this process remembers at most. */
const MAX_KEYS = 100_000;

/** Local state of one key in the current window. */
interface KeyWindow {
  window: number;
  /** Leased and not yet spent. */
  tokens: number;
  /** The window's count in the database after this process's last grant. */
  used: number;
  /** The next lease asked for. */
  leaseSize: number;
  /** The database granted less than asked: the window is spent for this process. */
  exhausted: boolean;
  /** A lease being taken; requests arriving meanwhile wait for it instead of asking again. */
  pending: Promise<void> | null;
}

/** A window that has ended, with no lease being taken: nothing in it counts any more. */
const ended = (s: KeyWindow, now: number) => s.window !== Math.floor(now / WINDOW_MS) && !s.pending;

export class RateLimits {
  /** Past MAX_KEYS, ended windows go first; a current one forgotten loses its unspent lease. */
  private keys = new BoundedMap<string, KeyWindow>(MAX_KEYS, ended);

  constructor(
    private db: Db,
    private now: () => number = Date.now,
  ) {}

  /** consume() without waiting: the decision when this process can make it alone, else null. */
  consumeLocal(keyId: string, limit: number): LimitDecision | null {
    return this.local(keyId, limit, true);
  }

  /** The local decision, spending a request from the lease when `spend` and allowed. */
  private local(keyId: string, limit: number, spend: boolean): LimitDecision | null {
    const t = this.now();
    const window = Math.floor(t / WINDOW_MS);
    const s = this.keys.get(keyId);
    if (!s || s.window !== window || (s.tokens === 0 && !s.exhausted)) return null;
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - t) / 1000));
    if (s.tokens === 0) return { allowed: false, limit, remaining: 0, resetSeconds };
    if (spend) s.tokens--;
    return {
      allowed: true,
      limit,
      remaining: Math.max(0, limit - s.used) + s.tokens,
      resetSeconds,
    };
  }

  /**
   * consumeKey() without waiting: the decision when this process can make it alone from both of
   * the key's buckets, else null; nothing is spent unless both allow it.
   */
  consumeKeyLocal(key: LimitedKey): LimitDecision | null {
    const account = accountBucket(key);
    if (!account) return this.consumeLocal(key.id, key.rateLimitPerMinute);
    const own = this.local(key.id, key.rateLimitPerMinute, false);
    const all = this.local(account.id, account.limit, false);
    if (!own || !all) return null;
    if (!own.allowed) return own;
    if (!all.allowed) return { ...all, ofAccount: true };
    return both(
      this.local(key.id, key.rateLimitPerMinute, true)!,
      this.local(account.id, account.limit, true)!,
    );
  }

  /**
   * A request with `key`: within the key's own limit and, when its account has other live keys,
   * within the account's (the highest limit among them, counted over all of them), so that an
   * account's keys together take no more than its most generous one alone. A request the account
   * refuses was counted against its key.
   */
  async consumeKey(key: LimitedKey): Promise<LimitDecision> {
    const own = await this.consume(key.id, key.rateLimitPerMinute);
    const account = accountBucket(key);
    if (!account || !own.allowed) return own;
    const all = await this.consume(account.id, account.limit);
    return all.allowed ? both(own, all) : { ...all, ofAccount: true };
  }

  async consume(keyId: string, limit: number): Promise<LimitDecision> {
    for (;;) {
      const d = this.consumeLocal(keyId, limit);
      if (d) return d;
      const s = this.state(keyId, Math.floor(this.now() / WINDOW_MS));
      s.pending ??= this.lease(keyId, s, limit).finally(() => {
        s.pending = null;
      });
      await s.pending; // a database error rejects every waiter: the request fails as unavailable
    }
  }

  private state(keyId: string, window: number): KeyWindow {
    let s = this.keys.get(keyId);
    if (!s || s.window !== window) {
      s = { window, tokens: 0, used: 0, leaseSize: 1, exhausted: false, pending: null };
      this.keys.set(keyId, s, window * WINDOW_MS);
    }
    return s;
  }

  private async lease(keyId: string, s: KeyWindow, limit: number): Promise<void> {
    const ask = Math.min(s.leaseSize, Math.max(1, Math.ceil(limit / LEASE_FRACTION)));
    const { used, granted } = await leaseWindow(this.db, keyId, s.window, ask, limit);
    if (this.keys.get(keyId) !== s) return; // the window turned meanwhile; this grant belongs to an old one
    s.used = used;
    s.tokens += granted;
    s.leaseSize = ask * 2;
    if (granted < ask) s.exhausted = true;
  }
}
