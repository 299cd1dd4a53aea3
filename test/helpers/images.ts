// A loopback server handing out test images: /a.png and /b.png, /held/* answered only once released,
// /missing.png is 404, /flaky.png is 503. Counts hits per path.
import http from 'node:http';
import sharp from 'sharp';

export async function imageServer() {
  const gradient = async (r: number, g: number, b: number) =>
    sharp({
      create: { width: 640, height: 360, channels: 3, background: { r, g, b } },
    })
      .composite([
        {
          input: Buffer.from(
            `<svg width="640" height="360"><circle cx="320" cy="180" r="120" fill="white"/></svg>`,
          ),
        },
      ])
      .png()
      .toBuffer();
  const files: Record<string, Buffer> = {
    '/a.png': await gradient(240, 120, 40),
    '/b.png': await gradient(40, 140, 240),
  };
  const hits: Record<string, number> = {};
  const waiting = new Map<string, Array<() => void>>();
  const released = new Set<string>();
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    hits[url] = (hits[url] ?? 0) + 1;
    if (url.startsWith('/held/')) {
      const go = () => res.writeHead(200, { 'content-type': 'image/png' }).end(files['/a.png']);
      if (released.has(url)) go();
      else waiting.set(url, [...(waiting.get(url) ?? []), go]);
      return;
    }
    if (url === '/flaky.png') {
      res.writeHead(503).end('busy');
      return;
    }
    const f = files[url];
    if (!f) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': f.length }).end(f);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const release = (p: string) => {
    released.add(p);
    (waiting.get(p) ?? []).forEach((go) => go());
    waiting.delete(p);
  };
  return {
    url: (p: string) => base + p,
    hits,
    release,
    close: () => {
      [...waiting.keys()].forEach(release);
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
