// The hand-counted HTTP series come out as prom-client's own would: cumulative buckets with `le` (a
// value on a bound counts in that bucket), +Inf, _sum and _count per route and method with the statuses
// merged, and a count per route, method and status.
import { expect, it } from 'vitest';
import client from 'prom-client';
import { HttpMetrics } from '../../src/metrics/http-metrics.ts';

it('matches what a prom-client Counter and Histogram print for the same observations', async () => {
  const ours = new client.Registry();
  const theirs = new client.Registry();
  const http = new HttpMetrics(ours);
  const count = new client.Counter({
    name: 'rendergate_http_requests_total',
    help: 'HTTP requests by route, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [theirs],
  });
  const hist = new client.Histogram({
    name: 'rendergate_http_request_duration_seconds',
    help: 'HTTP request latency',
    labelNames: ['route', 'method'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [theirs],
  });
  const seen: Array<[string, string, number, number]> = [
    ['/v1/generations/:id', 'GET', 200, 0.0004],
    ['/v1/generations/:id', 'GET', 200, 0.005],
    ['/v1/generations/:id', 'GET', 404, 0.0051],
    ['/v1/quote', 'POST', 200, 3],
    ['/v1/quote', 'POST', 429, 0.001],
    ['unmatched', 'GET', 404, 0.25],
  ];
  for (const [route, method, status, s] of seen) {
    http.observe(route, method, status, s);
    count.inc({ route, method, status });
    hist.observe({ route, method }, s);
  }
  expect(await ours.metrics()).toBe(await theirs.metrics());
});
