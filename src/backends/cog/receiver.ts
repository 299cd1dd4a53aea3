// The worker's receiver of Cog webhooks (async predictions, async.ts): a small HTTP listener on the
// port of RENDERGATE_WORKER_CALLBACK_URL. Cog POSTs the prediction's current state to the `webhook`
// URL it was given (replicate/cog docs/http.md "Webhooks"; crates/coglet/src/webhook.rs): at start, with
// new logs or output (at most every 500 ms), and when it is final (retried with backoff on 429, 5xx and
// connection errors). Each prediction this worker starts for a live attempt gets its own unguessable
// token in that URL, valid while the attempt runs; a POST to any other address, a body naming another
// prediction, or anything but a POST answers 404 and changes nothing.
import crypto from 'node:crypto';
import http from 'node:http';

export interface Prediction {
  id?: string;
  status?: string;
  output?: unknown;
  error?: unknown;
  logs?: string;
}

interface Registration {
  predictionId: string;
  onUpdate: (p: Prediction) => void;
}

export class CogReceiver {
  private byPath = new Map<string, Registration>();
  private server: http.Server | null = null;
  private listening: Promise<void> | null = null;
  private base: URL;

  /** `limitBytes`: the largest body taken (a final prediction may inline its file as a data URL). */
  constructor(
    callbackUrl: string,
    private limitBytes: number,
    private warn: (msg: string) => void = () => {},
  ) {
    this.base = new URL(callbackUrl);
  }

  /** The webhook URL for one prediction of a live attempt, and the function that retires it. */
  async register(
    predictionId: string,
    onUpdate: (p: Prediction) => void,
  ): Promise<{ url: string; release: () => void }> {
    await this.listen();
    const pathname = `${this.base.pathname.replace(/\/$/, '')}/cog-webhooks/${crypto.randomBytes(32).toString('base64url')}`;
    const reg = { predictionId, onUpdate };
    this.byPath.set(pathname, reg);
    return {
      url: `${this.base.origin}${pathname}`,
      release: () => {
        if (this.byPath.get(pathname) === reg) this.byPath.delete(pathname);
      },
    };
  }

  /** Listens on the callback URL's port (at start: a port already taken stops the start). */
  listen(): Promise<void> {
    this.listening ??= new Promise<void>((resolve, reject) => {
      const server = http.createServer((req, res) => this.handle(req, res));
      server.requestTimeout = 30_000;
      server.once('error', reject);
      server.listen(Number(this.base.port), () => {
        server.off('error', reject);
        resolve();
      });
      this.server = server;
    });
    return this.listening;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const answer = (status: number) => {
      if (!res.headersSent)
        res
          .writeHead(status, { 'content-type': 'application/json', connection: 'close' })
          .end('{}');
    };
    const reg = req.method === 'POST' ? this.byPath.get((req.url ?? '').split('?')[0]) : undefined;
    if (!reg) {
      req.resume();
      answer(404);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > this.limitBytes) {
        answer(413);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => undefined);
    req.on('end', () => {
      if (size > this.limitBytes) return;
      let p: Prediction;
      try {
        p = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Prediction;
      } catch {
        answer(400);
        return;
      }
      // Only the prediction this token was made for, and only while its attempt runs.
      if (
        typeof p !== 'object' ||
        p === null ||
        p.id !== reg.predictionId ||
        this.byPath.get((req.url ?? '').split('?')[0]) !== reg
      ) {
        answer(404);
        return;
      }
      try {
        reg.onUpdate(p);
      } catch (e) {
        this.warn(`a Cog webhook could not be taken: ${(e as Error).message}`);
      }
      answer(200);
    });
  }

  async close(): Promise<void> {
    this.byPath.clear();
    const server = this.server;
    if (!server) return;
    await this.listening?.catch(() => undefined);
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}
