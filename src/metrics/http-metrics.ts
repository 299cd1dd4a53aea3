// The per-request metrics, counted in plain arrays and turned into Prometheus series only when scraped.
// prom-client's labelled observe() validates and hashes its labels and allocates a closure on every call,
// which cost ~5 % of a cached poll's CPU; here a request is one Map lookup and a few additions. Registered
// in the same registry as the rest (prom-client calls get() at scrape time) with the same names, types and
// buckets as before.
import type client from 'prom-client';

type Value = { labels: Record<string, string | number>; value: number; metricName?: string };

interface Series {
  route: string;
  method: string;
  status: number;
  count: number;
  /** Observations per bucket (not cumulative), one more slot for +Inf. */
  buckets: number[];
  sum: number;
}

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export class HttpMetrics {
  private series = new Map<string, Series>();

  constructor(registry: client.Registry) {
    const counter = {
      name: 'rendergate_http_requests_total',
      help: 'HTTP requests by route, method and status',
      type: 'counter',
      aggregator: 'sum' as const,
      get: async () => ({ ...counter, values: this.counts() }),
    };
    const histogram = {
      name: 'rendergate_http_request_duration_seconds',
      help: 'HTTP request latency',
      type: 'histogram',
      aggregator: 'sum' as const,
      get: async () => ({ ...histogram, values: this.latencies() }),
    };
    registry.registerMetric(counter as unknown as client.Metric);
    registry.registerMetric(histogram as unknown as client.Metric);
  }

  observe(route: string, method: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let s = this.series.get(key);
    if (!s)
      this.series.set(
        key,
        (s = {
          route,
          method,
          status,
          count: 0,
          buckets: new Array<number>(BUCKETS.length + 1).fill(0),
          sum: 0,
        }),
      );
    s.count++;
    s.sum += seconds;
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
    s.buckets[i]++;
  }

  private counts(): Value[] {
    return [...this.series.values()].map((s) => ({
      labels: { route: s.route, method: s.method, status: s.status },
      value: s.count,
    }));
  }

  /** Latency by route and method (statuses merged), cumulative buckets as Prometheus wants them. */
  private latencies(): Value[] {
    const merged = new Map<
      string,
      { route: string; method: string; buckets: number[]; sum: number; count: number }
    >();
    for (const s of this.series.values()) {
      const key = `${s.method} ${s.route}`;
      let m = merged.get(key);
      if (!m)
        merged.set(
          key,
          (m = {
            route: s.route,
            method: s.method,
            buckets: new Array<number>(BUCKETS.length + 1).fill(0),
            sum: 0,
            count: 0,
          }),
        );
      s.buckets.forEach((n, i) => {
        m.buckets[i] += n;
      });
      m.sum += s.sum;
      m.count += s.count;
    }
    const out: Value[] = [];
    for (const m of merged.values()) {
      const labels = { route: m.route, method: m.method };
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += m.buckets[i];
        out.push({
          labels: { le, ...labels },
          value: cumulative,
          metricName: 'rendergate_http_request_duration_seconds_bucket',
        });
      });
      out.push({
        labels: { le: '+Inf', ...labels },
        value: m.count,
        metricName: 'rendergate_http_request_duration_seconds_bucket',
      });
      out.push({
        labels,
        value: m.sum,
        metricName: 'rendergate_http_request_duration_seconds_sum',
      });
      out.push({
        labels,
        value: m.count,
        metricName: 'rendergate_http_request_duration_seconds_count',
      });
    }
    return out;
  }
}
