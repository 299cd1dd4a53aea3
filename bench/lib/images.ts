// A loopback image server for the render benchmark: /a.png and /b.png, 1280×720 PNGs.
import http from 'node:http';
import sharp from 'sharp';

export async function imageServer() {
  const picture = async (r: number, g: number, b: number) =>
    sharp({
      create: { width: 1280, height: 720, channels: 3, background: { r, g, b } },
    })
      .composite([
        {
          input:
            Buffer.from(`<svg width="1280" height="720"><circle cx="640" cy="360" r="240" fill="white"/>
      <rect x="100" y="500" width="300" height="120" fill="rgb(${b},${r},${g})"/></svg>`),
        },
      ])
      .png()
      .toBuffer();
  const files: Record<string, Buffer> = {
    '/a.png': await picture(240, 120, 40),
    '/b.png': await picture(40, 140, 240),
  };
  const server = http.createServer((req, res) => {
    const f = files[req.url ?? '/'];
    if (!f) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': f.length }).end(f);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url: (p: string) => base + p,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
