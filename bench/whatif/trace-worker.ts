// What-if trace (RENDERGATE_BENCH_PRELOAD=bench/whatif/trace-worker.ts npm run bench -- --only dispatch):
// every 2 s the server child writes to stderr how long the worker's claims (Claimer.claim, for all its
// free slots at once) took and how many jobs they brought, how long its slots (Worker.run, claim to
// release) took, how often fill() found a fill already running, the event-loop lag and how many
// queries waited for a pool connection. It wraps internals by name, so it breaks when they are
// renamed; it changes no behaviour.
import { Claimer } from '../../src/queue/claim.ts';
import { Worker } from '../../src/queue/worker.ts';

const claims: number[] = [];
let claimedJobs = 0;
const slots: number[] = [];
let fills = 0;
let coalesced = 0;
let pool: { waitingCount: number } | null = null;
let waitMax = 0;
let waitSum = 0;
let waitN = 0;
let lagMax = 0;

const timed = <A extends unknown[], R>(fn: (...a: A) => Promise<R>, into: number[]) =>
  async function (this: unknown, ...a: A): Promise<R> {
    const t = performance.now();
    try {
      return await fn.apply(this, a);
    } finally {
      into.push(performance.now() - t);
    }
  };
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with `this` by the wrapper below
const claim = timed(Claimer.prototype.claim, claims);
Claimer.prototype.claim = async function (this: Claimer, wanted: number) {
  const jobs = await claim.call(this, wanted);
  claimedJobs += jobs.length;
  return jobs;
};
const proto = Worker.prototype as unknown as {
  run: (job: unknown) => Promise<void>;
  fill: () => void;
};
proto.run = timed(proto.run, slots);
const fill = proto.fill;
proto.fill = function (this: { filling: unknown; o: { db: { waitingCount: number } } }) {
  pool = this.o.db;
  fills++;
  if (this.filling) coalesced++;
  return fill.call(this);
};

let last = performance.now();
setInterval(() => {
  const now = performance.now();
  lagMax = Math.max(lagMax, now - last - 10);
  last = now;
  if (pool) {
    waitMax = Math.max(waitMax, pool.waitingCount);
    waitSum += pool.waitingCount;
    waitN++;
  }
}, 10).unref();

const pct = (xs: number[], q: number) =>
  xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]?.toFixed(1) ?? '-';
setInterval(() => {
  if (claims.length || slots.length) {
    process.stderr.write(
      `[trace-worker] claims ${claims.length} (${claimedJobs} jobs) p50 ${pct(claims, 0.5)} p99 ${pct(claims, 0.99)} ms; ` +
        `slot held p50 ${pct(slots, 0.5)} p99 ${pct(slots, 0.99)} ms; fill() ${fills} (${coalesced} while filling); ` +
        `loop lag max ${lagMax.toFixed(0)} ms; pool waiting avg ${(waitSum / Math.max(1, waitN)).toFixed(1)} max ${waitMax}\n`,
    );
  }
  claims.length = 0;
  claimedJobs = 0;
  slots.length = 0;
  fills = 0;
  coalesced = 0;
  lagMax = 0;
  waitMax = 0;
  waitSum = 0;
  waitN = 0;
}, 2000).unref();
