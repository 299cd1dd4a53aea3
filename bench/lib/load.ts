// The load generator: one autocannon run, summarised as throughput and exact latency percentiles.
//
// autocannon's own histogram records whole milliseconds, too coarse for sub-millisecond answers and
// for the growth comparison, so we record every 2xx response time (float ms, from process.hrtime)
// from its 'response' events and take exact percentiles. Throughput counts 2xx answers only; anything
// else is reported separately so a run full of 429s or 500s can never look fast.
import autocannon from 'autocannon';
import { percentile } from './stats.ts';

export interface LoadOptions {
  url: string;
  connections: number;
  durationS: number;
  method?: 'GET' | 'POST' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  /** Called for every request: return the headers to send (distinct idempotency keys, rotating API keys). */
  perRequestHeaders?: () => Record<string, string>;
  /** Open-loop pacing: requests per second over all connections. */
  overallRate?: number;
}

export interface LoadResult {
  rps: number;
  p50: number | null;
  p99: number | null;
  ok: number;
  non2xx: number;
  errors: number;
  durationS: number;
  statuses: Record<string, number>;
}

export function load(o: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let ok = 0;
  let non2xx = 0;
  const statuses: Record<string, number> = {};
  const method = o.method ?? 'GET';
  const base = { method, headers: { ...o.headers }, body: o.body };
  return new Promise((resolve, reject) => {
    const inst = autocannon(
      {
        url: o.url,
        connections: o.connections,
        duration: o.durationS,
        timeout: 30,
        overallRate: o.overallRate,
        ...(o.perRequestHeaders
          ? {
              requests: [
                {
                  ...base,
                  setupRequest: (req) => ({
                    ...req,
                    headers: { ...base.headers, ...o.perRequestHeaders!() },
                  }),
                },
              ],
            }
          : base),
      },
      (err, res) => {
        if (err) {
          reject(err);
          return;
        }
        const durationS = res.duration || o.durationS;
        resolve({
          rps: ok / durationS,
          p50: percentile(latencies, 50),
          p99: percentile(latencies, 99),
          ok,
          non2xx,
          errors: res.errors + res.timeouts,
          durationS,
          statuses,
        });
      },
    );
    inst.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status >= 200 && status < 300) {
        ok++;
        latencies.push(ms);
      } else non2xx++;
    });
  });
}

/** A problem with a run that makes its figures suspect, or null. */
export function loadProblem(r: LoadResult): string | null {
  const total = r.ok + r.non2xx + r.errors;
  if (total === 0) return 'no responses';
  if (r.non2xx + r.errors > total * 0.001) {
    const codes = Object.entries(r.statuses)
      .filter(([s]) => !s.startsWith('2'))
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');
    return `${r.non2xx} non-2xx (${codes || '-'}), ${r.errors} errors of ${total}`;
  }
  return null;
}
