// Prometheus metrics (scraped at /metrics). One registry per process; counters of money are in cents.
import client from 'prom-client';
import { HttpMetrics } from './http-metrics.ts';
import { EventLoopWatch } from './event-loop.ts';

export class Metrics {
  readonly registry = new client.Registry();
  /** rendergate_http_requests_total and rendergate_http_request_duration_seconds (metrics-http.ts). */
  private http = new HttpMetrics(this.registry);
  readonly renders = new client.Counter({
    name: 'rendergate_renders_total',
    help: 'Renders that reached a final status in this process, by model and status',
    labelNames: ['model', 'status'],
    registers: [this.registry],
  });
  readonly renderDuration = new client.Histogram({
    name: 'rendergate_render_duration_seconds',
    help: 'Time a render attempt ran',
    labelNames: ['model'],
    buckets: [0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });
  readonly queueWait = new client.Histogram({
    name: 'rendergate_queue_wait_seconds',
    help: 'Time from a render becoming runnable to a worker claiming it',
    labelNames: ['model'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [this.registry],
  });
  readonly chargedCents = new client.Counter({
    name: 'rendergate_charged_cents_total',
    help: 'Cents charged for renders',
    registers: [this.registry],
  });
  readonly refundedCents = new client.Counter({
    name: 'rendergate_refunded_cents_total',
    help: 'Cents returned for renders',
    registers: [this.registry],
  });
  readonly rateLimited = new client.Counter({
    name: 'rendergate_rate_limit_denials_total',
    help: 'Requests refused with 429',
    registers: [this.registry],
  });
  readonly queueDepth = new client.Gauge({
    name: 'rendergate_queue_depth',
    help: 'Renders queued and not running (whole cluster)',
    registers: [this.registry],
  });
  /** Counts the held `Prefer: wait` requests of this process (set by the composition root). */
  heldRequests: () => number = () => 0;
  private readonly held = new client.Gauge({
    name: 'rendergate_held_requests',
    help: 'Requests held by Prefer: wait in this process',
    registers: [this.registry],
    collect: () => {
      this.held.set(this.heldRequests());
    },
  });
  /** Counts the open live event streams of this process (set by the composition root). */
  eventStreams: () => number = () => 0;
  private readonly streams = new client.Gauge({
    name: 'rendergate_event_streams',
    help: 'Live event streams of renders open in this process',
    registers: [this.registry],
    collect: () => {
      this.streams.set(this.eventStreams());
    },
  });
  readonly running = new client.Gauge({
    name: 'rendergate_renders_running',
    help: 'Renders running (whole cluster)',
    registers: [this.registry],
  });
  readonly claimsSkippedStalled = new client.Counter({
    name: 'rendergate_claims_skipped_stalled_total',
    help: 'Claim rounds this worker skipped because its event loop had just stalled',
    registers: [this.registry],
  });
  /** This process's event loop: the worker stops claiming while it is stalled; /readyz reports it. */
  readonly eventLoop = new EventLoopWatch();

  readonly backendUp = new client.Gauge({
    name: 'rendergate_backend_up',
    help: 'Whether the last health check of a model server passed (1) or not (0), as this process sees it',
    labelNames: ['driver', 'url'],
    registers: [this.registry],
  });
  readonly backendRequest = new client.Histogram({
    name: 'rendergate_backend_request_seconds',
    help: 'Time of requests to model servers (health checks included), by driver and kind',
    labelNames: ['driver', 'kind'],
    buckets: [0.005, 0.02, 0.1, 0.5, 1, 5, 30, 120, 600],
    registers: [this.registry],
  });
  readonly backendErrors = new client.Counter({
    name: 'rendergate_backend_errors_total',
    help: 'Failed requests to model servers, by driver and error code',
    labelNames: ['driver', 'code'],
    registers: [this.registry],
  });

  /** One answered HTTP request. */
  observeRequest(route: string, method: string, status: number, seconds: number): void {
    this.http.observe(route, method, status, seconds);
    if (status === 429) this.rateLimited.inc();
  }

  constructor() {
    client.collectDefaultMetrics({ register: this.registry, prefix: 'rendergate_' });
    const watch = this.eventLoop;
    new client.Gauge({
      name: 'rendergate_event_loop_stalled',
      registers: [this.registry],
      help: "1 while this process's event loop was blocked past the stall threshold within the cool-down (its worker claims nothing then)",
      collect() {
        this.set(watch.stalledNow() ? 1 : 0);
      },
    });
    new client.Gauge({
      name: 'rendergate_event_loop_last_stall_seconds',
      help: "Length of this process's last event-loop stall",
      registers: [this.registry],
      collect() {
        this.set(watch.state().lastStallMs / 1000);
      },
    });
  }
}
