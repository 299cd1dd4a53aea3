// Health of the catalog's model servers, as this process sees them. Each worker probes every server of
// its catalog itself (Cog `GET /health-check` READY or BUSY, ComfyUI `GET /system_stats`, OpenAI
// `GET /models`) and gates its own claims on the answers (claim.ts): a server is down for the workers
// that cannot reach it, which is what matters when one worker's network is cut off, and no shared table
// can hold a stale "healthy" written by a worker that has since died. Probes are a few small requests
// per server every RENDERGATE_BACKEND_HEALTH_SECONDS, whatever the number of workers.
import type { Metrics } from '../metrics/metrics.ts';
import { stripUserinfo } from '../domain/scrub.ts';

export interface HealthTarget {
  driver: string;
  url: string;
  probe: (url: string, signal: AbortSignal) => Promise<void>;
}

export interface ServerHealth {
  driver: string;
  url: string;
  healthy: boolean;
  latencyMs: number | null;
  error: string | null;
  checkedAt: string | null;
  consecutiveFailures: number;
}

/** An address for labels and reports: without any user or password it may carry. */
export function displayUrl(url: string): string {
  try {
    if (!/^https?:/i.test(url)) return '(invalid address)';
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(invalid address)';
  }
}

export class BackendHealth {
  private state = new Map<string, ServerHealth>();
  private targets = new Map<string, HealthTarget>();
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;

  constructor(
    targets: HealthTarget[],
    private metrics: Metrics,
    private everyMs: number,
    private onRecover: () => void = () => {},
    private redact: (text: string) => string = stripUserinfo,
  ) {
    for (const t of targets) {
      if (this.targets.has(t.url)) continue; // one probe per server, whatever the number of models on it
      this.targets.set(t.url, t);
      this.state.set(t.url, {
        driver: t.driver,
        url: displayUrl(t.url),
        healthy: false,
        latencyMs: null,
        error: 'not checked yet',
        checkedAt: null,
        consecutiveFailures: 0,
      });
    }
  }

  get size(): number {
    return this.targets.size;
  }

  /** Whether renders may go to this server now. A server that is not probed (hosted APIs) always may. */
  isHealthy(url: string): boolean {
    return this.state.get(url)?.healthy ?? true;
  }

  /** Probes every server once, then every `everyMs`. */
  async start(): Promise<void> {
    if (this.targets.size === 0) return;
    await this.checkAll();
    this.timer = setInterval(() => {
      this.round ??= this.checkAll().finally(() => {
        this.round = null;
      });
    }, this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.round;
  }

  snapshot(): ServerHealth[] {
    return [...this.state.values()].map((s) => ({ ...s }));
  }

  async checkAll(): Promise<void> {
    let recovered = false;
    await Promise.all(
      [...this.targets.values()].map(async (t) => {
        const s = this.state.get(t.url)!;
        const t0 = performance.now();
        try {
          await t.probe(t.url, AbortSignal.timeout(Math.min(this.everyMs, 5_000)));
          if (!s.healthy) recovered = true;
          Object.assign(s, { healthy: true, error: null, consecutiveFailures: 0 });
        } catch (e) {
          const why = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
          // redacted whole, then cut: a probe's error may quote the address it was given
          Object.assign(s, {
            healthy: false,
            error: stripUserinfo(this.redact(String(why))).slice(0, 200),
            consecutiveFailures: s.consecutiveFailures + 1,
          });
          this.metrics.backendErrors.inc({ driver: t.driver, code: 'HEALTH_CHECK_FAILED' });
        }
        s.latencyMs = Math.round((performance.now() - t0) * 10) / 10;
        s.checkedAt = new Date().toISOString();
        this.metrics.backendUp.set({ driver: t.driver, url: s.url }, s.healthy ? 1 : 0);
        this.metrics.backendRequest.observe(
          { driver: t.driver, kind: 'health' },
          s.latencyMs / 1000,
        );
      }),
    );
    if (recovered) this.onRecover();
  }
}
