// Per-key request limits in a fixed one-minute window, counted in Postgres by rate-limiter-flexible so
// that every process on the database shares one count per key.
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Db } from '../db/pool.ts';

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export class RateLimits {
  private limiters = new Map<number, RateLimiterPostgres>();

  constructor(private db: Db) {}

  private limiter(points: number): RateLimiterPostgres {
    let l = this.limiters.get(points);
    if (!l) {
      l = new RateLimiterPostgres({
        storeClient: this.db, storeType: 'pool', tableName: 'rate_limits', tableCreated: true,
        points, duration: 60, keyPrefix: 'k', clearExpiredByTimeout: false,
      });
      this.limiters.set(points, l);
    }
    return l;
  }

  async consume(keyId: string, perMinute: number): Promise<LimitDecision> {
    try {
      const res = await this.limiter(perMinute).consume(keyId, 1);
      return { allowed: true, limit: perMinute, remaining: res.remainingPoints, resetSeconds: Math.ceil(res.msBeforeNext / 1000) };
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e; // a store error, e.g. the database is down
      return { allowed: false, limit: perMinute, remaining: 0, resetSeconds: Math.max(1, Math.ceil(e.msBeforeNext / 1000)) };
    }
  }
}
