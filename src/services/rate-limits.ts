// Per-key request limits in fixed one-minute windows (aligned to the clock's minutes), shared by every
// process on the database without a database write per request.
//
// The count of a key's window lives in Postgres (rate_windows). A process does not spend from it one
// request at a time: it takes a lease of several requests with one guarded statement that never grants
// past the limit, and spends the lease in memory. Leases start at one request and double with each
// refill in a window, up to ⌈limit/64⌉, so a quiet key is counted exactly and a busy one costs one
// statement per ⌈limit/64⌉ requests.
//
// What this guarantees, on any number of processes: never more than `limit` requests admitted in a
// window (grants are taken from the shared count before they are spent). With one process it is exact.
// With N processes serving one key, a lease a process took and did not spend before the window ended
// is lost to the others, so at worst (N − 1)·⌈limit/64⌉ fewer requests are admitted (1.6 % of the
// limit per extra process); for limits up to 64 a minute every lease is one request and the limit is
// exact everywhere.
import type { Db } from '../db/pool.ts';
import { leaseWindow } from '../db/rate-windows.ts';

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

const WINDOW_MS = 60_000;
/** The largest lease is this fraction of the limit. */
const LEASE_FRACTION = 64;

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

export class RateLimits {
  private keys = new Map<string, KeyWindow>();

  constructor(
    private db: Db,
    private now: () => number = Date.now,
  ) {}

  /** consume() without waiting: the decision when this process can make it alone, else null. */
  consumeLocal(keyId: string, limit: number): LimitDecision | null {
    const t = this.now();
    const window = Math.floor(t / WINDOW_MS);
    const s = this.keys.get(keyId);
    if (!s || s.window !== window || (s.tokens === 0 && !s.exhausted)) return null;
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - t) / 1000));
    if (s.tokens === 0) return { allowed: false, limit, remaining: 0, resetSeconds };
    s.tokens--;
    return {
      allowed: true,
      limit,
      remaining: Math.max(0, limit - s.used) + s.tokens,
      resetSeconds,
    };
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
      if (!s && this.keys.size >= 100_000) this.forgetOldWindows(window);
      s = { window, tokens: 0, used: 0, leaseSize: 1, exhausted: false, pending: null };
      this.keys.set(keyId, s);
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

  private forgetOldWindows(window: number) {
    for (const [k, s] of this.keys) if (s.window !== window && !s.pending) this.keys.delete(k);
  }
}
