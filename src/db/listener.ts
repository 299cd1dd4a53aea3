// A dedicated LISTEN connection that reconnects by itself after the database restarts. Notifications
// are a fast path only: the worker also polls, so one lost while disconnected delays a job by a poll.
import pg from 'pg';

export class Listener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private url: string,
    private channels: string[],
    private onNotify: (channel: string, payload: string) => void,
    private onReconnect: () => void,
    private log: (msg: string) => void,
    /** The connection was lost: notifications sent until the next onReconnect are missed. */
    private onDisconnect: () => void = () => {},
  ) {}

  async start(): Promise<void> {
    await this.connect().catch(() => this.scheduleRetry());
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5_000 });
    client.on('notification', (n) => this.onNotify(n.channel, n.payload ?? ''));
    client.on('error', () => {
      /* followed by 'end' */
    });
    client.on('end', () => {
      if (this.client === client) {
        this.client = null;
        this.onDisconnect();
      }
      if (!this.stopped) this.scheduleRetry();
    });
    await client.connect();
    for (const ch of this.channels) await client.query(`LISTEN ${client.escapeIdentifier(ch)}`);
    if (this.stopped) {
      await client.end();
      return;
    }
    this.client = client;
    this.onReconnect();
  }

  private scheduleRetry() {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect().catch((e) => {
        this.log(`listener reconnect failed: ${(e as Error).message}`);
        this.scheduleRetry();
      });
    }, 1_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.client?.end().catch(() => undefined);
  }
}

/**
 * The Listener of a cache kept correct by notifications (services/generation-cache.ts,
 * session-cache.ts): `listening` is true only while the connection is up, since notifications sent
 * while it is down are lost and the cache must then serve nothing; `drop` empties the cache whenever
 * some may have been missed (the connection lost, or back), and `up` follows a reconnection.
 */
export class CacheListener {
  listening = false;
  private listener: Listener;

  constructor(
    url: string,
    channels: string[],
    onNotify: (channel: string, payload: string) => void,
    drop: () => void,
    log: (msg: string) => void,
    up: () => void = () => {},
  ) {
    this.listener = new Listener(
      url,
      channels,
      onNotify,
      () => {
        drop();
        this.listening = true;
        up();
      },
      log,
      () => {
        this.listening = false;
        drop();
      },
    );
  }

  start(): Promise<void> {
    return this.listener.start();
  }

  stop(): Promise<void> {
    this.listening = false;
    return this.listener.stop();
  }
}
