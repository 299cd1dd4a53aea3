// A webhook receiver outside our product, as a customer runs one: it verifies each request with the
// `standardwebhooks` package (standard-webhooks/standard-webhooks, libraries/javascript), as its README
// shows, and answers per path: /ok 204, /fail-N 500 for the first N attempts of each webhook-id then 200,
// /hang-first holds the first attempt of each id open and never answers it (200 afterwards), /gone 410,
// any other path 200.
// It records every request and how many attempts of one webhook-id were ever in flight at once.
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  id: string;
  timestamp: string;
  body: any;
  verified: boolean;
  at: number;
}

export async function webhookReceiver() {
  const secrets = new Map<string, string>(); // path → secret
  const received: Received[] = [];
  const seen = new Map<string, number>(); // webhook-id → attempts so far
  const inFlight = new Map<string, number>();
  let maxConcurrentPerId = 0;
  const hung: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req
      .setEncoding('utf8')
      .on('data', (d) => {
        raw += d;
      })
      .on('end', () => {
        const path = (req.url ?? '/').split('?')[0];
        const id = String(req.headers['webhook-id']);
        const n = (seen.get(id) ?? 0) + 1;
        seen.set(id, n);
        const now = (inFlight.get(id) ?? 0) + 1;
        inFlight.set(id, now);
        maxConcurrentPerId = Math.max(maxConcurrentPerId, now);
        res.on('close', () => inFlight.set(id, inFlight.get(id)! - 1));
        let verified = false;
        try {
          const secret = secrets.get(path);
          if (secret) {
            new Webhook(secret).verify(raw, req.headers as Record<string, string>);
            verified = true;
          }
        } catch {
          /* recorded as not verified */
        }
        received.push({
          path,
          id,
          timestamp: String(req.headers['webhook-timestamp']),
          body: JSON.parse(raw),
          verified,
          at: Date.now(),
        });
        const fail = /^\/fail-(\d+)$/.exec(path);
        if (path === '/gone') res.writeHead(410).end();
        else if (fail && n <= Number(fail[1])) res.writeHead(500).end('no');
        else if (path === '/hang-first' && n === 1) hung.push(res);
        else res.writeHead(path === '/ok' ? 204 : 200).end();
      });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    base,
    received,
    url: (path: string) => base + path,
    secret: (path: string, secret: string) => secrets.set(path, secret),
    maxConcurrentPerId: () => maxConcurrentPerId,
    close: () => {
      hung.forEach((r) => r.destroy());
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
