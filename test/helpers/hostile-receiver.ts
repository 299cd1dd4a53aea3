// Webhook receivers that a hostile account points its endpoints at (docs/api.md "Abuse limits"), as a
// real HTTP server on loopback: `/drip` answers 200 and then 1 KB every 200 ms forever, `/hang` reads
// the request and never answers, `/flood` answers 200 and then writes its body as fast as the socket
// takes it, forever; any other path answers 204. It counts the connections open on each path (tests
// wait on them with waitFor). Used by the webhook bound tests and the soak in `npm run bench`.
import http from 'node:http';

export async function hostileReceiver(host = '127.0.0.1') {
  const open = new Map<string, number>();
  const received: { path: string; id: string; type: string; generationId: string; at: number }[] =
    [];
  const timers = new Set<NodeJS.Timeout>();
  let closedByPeer = 0;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const kind = path.split('/')[1] ?? '';
    open.set(kind, (open.get(kind) ?? 0) + 1);
    req.socket.once('close', () => {
      open.set(kind, open.get(kind)! - 1);
      closedByPeer++;
    });
    let raw = '';
    req
      .setEncoding('utf8')
      .on('data', (d) => {
        raw += d;
      })
      .on('end', () => {
        let body: { type?: string; data?: { id?: string } } = {};
        try {
          body = JSON.parse(raw);
        } catch {
          /* recorded without a type */
        }
        received.push({
          path,
          id: String(req.headers['webhook-id']),
          type: String(body.type),
          generationId: String(body.data?.id),
          at: Date.now(),
        });
        if (kind === 'hang') return;
        if (kind === 'drip') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const t = setInterval(() => res.write('x'.repeat(1024)), 200);
          timers.add(t);
          res.once('close', () => {
            clearInterval(t);
            timers.delete(t);
          });
          return;
        }
        if (kind === 'flood') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const chunk = Buffer.alloc(16 * 1024, 'y');
          const pump = () => {
            while (!res.destroyed && res.write(chunk)) {
              /* until the socket is full */
            }
          };
          res.on('drain', pump);
          pump();
          return;
        }
        res.writeHead(204).end();
      });
  });
  server.keepAliveTimeout = 1;
  await new Promise<void>((r) => server.listen(0, host, r));
  const base = `http://${host}:${(server.address() as { port: number }).port}`;
  return {
    base,
    received,
    url: (path: string) => base + path,
    /** Connections open now whose path starts with `/kind`. */
    open: (kind: string) => open.get(kind) ?? 0,
    closedByPeer: () => closedByPeer,
    close: () => {
      timers.forEach((t) => clearInterval(t));
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Open file descriptors of this process (sockets, files, pipes), from /proc/self/fd. */
export async function openFds(): Promise<number> {
  const { readdir } = await import('node:fs/promises');
  return (await readdir('/proc/self/fd')).length;
}
