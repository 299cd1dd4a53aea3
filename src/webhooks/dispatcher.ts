// Delivers the webhook outbox (migrations/009) from worker processes, at least once. Each delivery is
// claimed with SKIP LOCKED and a lease longer than the attempt's timeout, so two workers never send the
// same attempt at once; every write after an attempt is fenced by the lease owner and the attempt count,
// so a worker that lost its lease cannot overwrite a later attempt. A worker killed mid-attempt leaves
// the lease to lapse; the delivery is sent again, with the same webhook-id, by whichever worker comes next.
import crypto from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../db/pool.ts';
import { Listener } from '../db/listener.ts';
import { claimDeliveries, recordAttempt, type ClaimedDelivery as Claimed } from '../db/webhook-deliveries.ts';
import { disableEndpoint } from '../db/webhook-endpoints.ts';
import { WEBHOOKS_CHANNEL } from '../db/channels.ts';
import { anyAddressPolicy, publicAddressPolicy } from '../net/address-guard.ts';
import { guardedPost, type PostOutcome } from './post.ts';

export const ATTEMPT_TIMEOUT_MS = 15_000;
const LEASE_SECONDS = 30;
const POLL_MS = 1_000;

export interface DispatcherOptions {
  db: Db;
  databaseUrl: string;
  log: Logger;
  retrySeconds: number[];
  allowPrivateUrls: boolean;
  /** The Generation JSON of a stored row snapshot (the services' view, given by the composition root). */
  view: (snapshot: Record<string, unknown>) => Record<string, unknown>;
  concurrency?: number;
}

export class WebhookDispatcher {
  readonly owner = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  private listener: Listener;
  private timer: NodeJS.Timeout | null = null;
  private inFlight = new Set<Promise<void>>();
  private filling = false;
  private again = false;
  private stopped = false;
  private concurrency: number;

  constructor(private o: DispatcherOptions) {
    this.concurrency = o.concurrency ?? 16;
    this.listener = new Listener(o.databaseUrl, [WEBHOOKS_CHANNEL], () => this.fill(), () => this.fill(), (m) => o.log.warn(m));
  }

  async start(): Promise<void> {
    await this.listener.start();
    this.timer = setInterval(() => this.fill(), POLL_MS);
    this.fill();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.listener.stop();
    await Promise.allSettled([...this.inFlight]);
  }

  /** Claims due deliveries into free slots; calls while one runs coalesce into one more round. */
  fill(): void {
    if (this.stopped) return;
    if (this.filling) { this.again = true; return; }
    this.filling = true;
    void (async () => {
      try {
        do {
          this.again = false;
          const free = this.concurrency - this.inFlight.size;
          if (free <= 0) break;
          const rows = await claimDeliveries(this.o.db, this.owner, free, LEASE_SECONDS);
          for (const d of rows) {
            const p: Promise<void> = this.deliver(d).catch((e) => this.o.log.warn({ err: e, deliveryId: d.id }, 'webhook delivery could not be recorded'))
              .finally(() => { this.inFlight.delete(p); this.fill(); });
            this.inFlight.add(p);
          }
          if (rows.length === free) this.again = true;
        } while (this.again && !this.stopped);
      } catch (e) {
        this.o.log.warn({ err: e }, 'claiming webhook deliveries failed');
      } finally {
        this.filling = false;
      }
    })();
  }

  private async deliver(d: Claimed): Promise<void> {
    if (!d.live) {
      await this.record(d, 'failed', null, d.attempts);
      return;
    }
    const body = JSON.stringify({ type: d.type, timestamp: d.created_at.toISOString(), data: this.o.view(d.snapshot) });
    const now = new Date();
    // Standard Webhooks, signed by its own package: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">.
    const signature = new Webhook(d.secret).sign(d.id, now, body);
    const outcome: PostOutcome = await guardedPost(d.url, body, {
      'webhook-id': d.id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature,
    }, { policy: this.o.allowPrivateUrls ? anyAddressPolicy : publicAddressPolicy, timeoutMs: ATTEMPT_TIMEOUT_MS });
    const attempts = d.attempts + 1;
    const status = 'status' in outcome ? outcome.status : null;
    if (status !== null && status >= 200 && status < 300) {
      await this.record(d, 'delivered', status, attempts);
    } else if (status === 410) {
      // The receiver says the endpoint is gone for good: stop sending it anything.
      await disableEndpoint(this.o.db, d.endpoint_id);
      await this.record(d, 'failed', status, attempts);
      this.o.log.info({ endpointId: d.endpoint_id }, 'webhook endpoint answered 410 and was disabled');
    } else if (attempts > this.o.retrySeconds.length) {
      await this.record(d, 'failed', status, attempts);
    } else {
      await this.record(d, 'pending', status, attempts, this.o.retrySeconds[attempts - 1]);
      if ('error' in outcome) this.o.log.debug({ deliveryId: d.id, error: outcome.error }, 'webhook attempt failed');
    }
  }

  /** The attempt's result, only while this worker still holds the delivery at the attempt it claimed. */
  private async record(d: Claimed, status: 'pending' | 'delivered' | 'failed', response: number | null, attempts: number, retryIn?: number) {
    await recordAttempt(this.o.db, {
      id: d.id, owner: this.owner, status, response, attempts, retryIn: retryIn ?? 0, claimedAttempts: d.attempts,
    });
  }
}
