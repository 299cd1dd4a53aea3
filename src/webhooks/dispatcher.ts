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
import { WEBHOOKS_CHANNEL } from '../db/channels.ts';
import { anyAddressPolicy, publicAddressPolicy } from '../net/address-guard.ts';
import { guardedPost, type PostOutcome } from './post.ts';
import {
  claimDeliveries,
  recordAttempt,
  type ClaimedDelivery,
  type EndpointOutcome,
} from '../db/webhook-deliveries.ts';
import { disableEndpoint } from '../db/webhook-endpoints.ts';

export const ATTEMPT_TIMEOUT_MS = 15_000;
const LEASE_SECONDS = 30;
const POLL_MS = 1_000;
/** Attempts in flight at once, per dispatcher process (each holds one socket for at most 15 s). */
export const DISPATCH_SLOTS = 64;
/** Attempts in flight at once, cluster-wide, to one endpoint and for one account. */
export const PER_ENDPOINT_IN_FLIGHT = 2;
export const PER_ACCOUNT_IN_FLIGHT = 4;
/** An endpoint failing this many attempts in a row is paused 60 s, doubling per failure, at most 1 h. */
export const PAUSE_AFTER_FAILURES = 5;
const PAUSE_SECONDS = 60;
const MAX_PAUSE_SECONDS = 3600;

export interface DispatcherOptions {
  db: Db;
  databaseUrl: string;
  log: Logger;
  retrySeconds: number[];
  allowPrivateUrls: boolean;
  /** The Generation JSON of a stored row snapshot (the services' view, given by the composition root). */
  view: (snapshot: Record<string, unknown>) => Record<string, unknown>;
  concurrency?: number;
  perEndpoint?: number;
  perAccount?: number;
}

type Claimed = ClaimedDelivery;

/** Adds `by` to the count of `key`, dropping it at zero. */
function count(m: Map<string, number>, key: string, by: number): void {
  const n = (m.get(key) ?? 0) + by;
  if (n > 0) m.set(key, n);
  else m.delete(key);
}

export class WebhookDispatcher {
  readonly owner = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  private listener: Listener;
  private timer: NodeJS.Timeout | null = null;
  private inFlight = new Set<Promise<void>>();
  /** Attempts this process has in flight, per endpoint and per account (what its leases count). */
  private byEndpoint = new Map<string, number>();
  private byAccount = new Map<string, number>();
  private filling = false;
  private again = false;
  private stopped = false;
  private concurrency: number;

  constructor(private o: DispatcherOptions) {
    this.concurrency = o.concurrency ?? DISPATCH_SLOTS;
    this.listener = new Listener(
      o.databaseUrl,
      [WEBHOOKS_CHANNEL],
      () => this.fill(),
      () => this.fill(),
      (m) => o.log.warn(m),
    );
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
    if (this.filling) {
      this.again = true;
      return;
    }
    this.filling = true;
    void (async () => {
      try {
        do {
          this.again = false;
          const free = this.concurrency - this.inFlight.size;
          if (free <= 0) break;
          const rows = await claimDeliveries(this.o.db, {
            owner: this.owner,
            max: free,
            leaseSeconds: LEASE_SECONDS,
            perEndpoint: this.o.perEndpoint ?? PER_ENDPOINT_IN_FLIGHT,
            perAccount: this.o.perAccount ?? PER_ACCOUNT_IN_FLIGHT,
          });
          for (const d of rows) {
            const p: Promise<void> = this.deliver(d)
              .catch((e) =>
                this.o.log.warn(
                  { err: e, deliveryId: d.id },
                  'webhook delivery could not be recorded',
                ),
              )
              .finally(() => {
                const bound = this.release(p, d);
                if (bound) this.fill();
              });
            this.inFlight.add(p);
            count(this.byEndpoint, d.endpoint_id, 1);
            count(this.byAccount, d.account_id, 1);
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

  /**
   * Frees the slot of an attempt that ended; true when that makes room a claim could not have had:
   * every slot was taken, or the attempt's endpoint or account was at its in-flight cap. Only then
   * does the end of an attempt claim again. Any other claim would find what the last one left: due
   * deliveries that are not held back by a cap were all taken by it (or by a claim since). A cap
   * held partly by another dispatcher's leases is freed for this one by its poll (POLL_MS).
   */
  private release(p: Promise<void>, d: Claimed): boolean {
    const perEndpoint = this.o.perEndpoint ?? PER_ENDPOINT_IN_FLIGHT;
    const perAccount = this.o.perAccount ?? PER_ACCOUNT_IN_FLIGHT;
    const bound =
      this.inFlight.size >= this.concurrency ||
      (this.byEndpoint.get(d.endpoint_id) ?? 0) >= perEndpoint ||
      (this.byAccount.get(d.account_id) ?? 0) >= perAccount;
    this.inFlight.delete(p);
    count(this.byEndpoint, d.endpoint_id, -1);
    count(this.byAccount, d.account_id, -1);
    return bound;
  }

  private async deliver(d: Claimed): Promise<void> {
    if (!d.live) {
      await this.record(d, {
        status: 'failed',
        response: null,
        attempts: d.attempts,
        error: 'the endpoint was disabled or deleted',
      });
      return;
    }
    // livemode: false for the renders of test keys (the snapshot's mode, migrations/014), as Stripe marks its events.
    const body = JSON.stringify({
      type: d.type,
      timestamp: d.created_at.toISOString(),
      livemode: d.snapshot.mode !== 'test',
      // An account's event (an alert, migrations/036) carries its data as written; a generation's
      // snapshot is the row, shown as the API shows it.
      data: d.type.startsWith('generation.')
        ? this.o.view(d.snapshot)
        : (d.snapshot.data as Record<string, unknown>),
    });
    const now = new Date();
    // Standard Webhooks, signed by its own package: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">.
    const signature = new Webhook(d.secret).sign(d.id, now, body);
    const outcome: PostOutcome = await guardedPost(
      d.url,
      body,
      {
        'webhook-id': d.id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signature,
      },
      {
        policy: this.o.allowPrivateUrls ? anyAddressPolicy : publicAddressPolicy,
        timeoutMs: ATTEMPT_TIMEOUT_MS,
      },
    );
    const attempts = d.attempts + 1;
    const status = 'status' in outcome ? outcome.status : null;
    const ok = status !== null && status >= 200 && status < 300;
    const error = 'error' in outcome ? outcome.error : ok ? null : `HTTP ${status}`;
    const endpoint: EndpointOutcome = {
      endpointId: d.endpoint_id,
      ok,
      pauseAfter: PAUSE_AFTER_FAILURES,
      pauseSeconds: PAUSE_SECONDS,
      maxPauseSeconds: MAX_PAUSE_SECONDS,
    };
    if (ok) {
      await this.record(d, {
        status: 'delivered',
        response: status,
        attempts,
        error: null,
        endpoint,
      });
    } else if (status === 410) {
      // The receiver says the endpoint is gone for good: stop sending it anything.
      await disableEndpoint(this.o.db, d.endpoint_id);
      await this.record(d, { status: 'failed', response: status, attempts, error, endpoint });
      this.o.log.info(
        { endpointId: d.endpoint_id },
        'webhook endpoint answered 410 and was disabled',
      );
    } else if (attempts > this.o.retrySeconds.length) {
      await this.record(d, { status: 'failed', response: status, attempts, error, endpoint });
    } else {
      await this.record(d, {
        status: 'pending',
        response: status,
        attempts,
        error,
        endpoint,
        retryIn: this.o.retrySeconds[attempts - 1],
      });
      this.o.log.debug({ deliveryId: d.id, error }, 'webhook attempt failed');
    }
  }

  /**
   * The attempt's result, only while this worker still holds the delivery at the attempt it claimed,
   * and its endpoint's outcome (whatever that fence says), in one statement.
   */
  private async record(
    d: Claimed,
    r: {
      status: 'pending' | 'delivered' | 'failed';
      response: number | null;
      attempts: number;
      error: string | null;
      retryIn?: number;
      endpoint?: EndpointOutcome;
    },
  ) {
    await recordAttempt(this.o.db, {
      id: d.id,
      owner: this.owner,
      claimedAttempts: d.attempts,
      status: r.status,
      response: r.response,
      error: r.error,
      attempts: r.attempts,
      retryInSeconds: r.retryIn,
      endpoint: r.endpoint,
    });
  }
}
