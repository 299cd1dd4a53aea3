// What-if (RENDERGATE_BENCH_PRELOAD=bench/whatif/no-rate-limit-write.ts npm run bench -- --only poll,quote):
// every request is allowed without the rate limiter's per-request write to PostgreSQL, to show what
// the rest of the request path costs. Only for measuring; the product must keep its limits.
import { RateLimits } from '../../src/services/rate-limits.ts';

RateLimits.prototype.consume = async (_keyId: string, perMinute: number) =>
  ({ allowed: true, limit: perMinute, remaining: perMinute, resetSeconds: 60 });
