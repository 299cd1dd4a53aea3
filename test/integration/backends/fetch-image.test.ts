// The guarded fetcher against real loopback servers. No test here connects anywhere but loopback: private
// and link-local addresses are only ever refused, and a policy wrapper turns any accidental "allowed" for
// a non-loopback address into a refusal, so even a broken guard sends no traffic off this machine.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicAddressPolicy, type AddressPolicy } from '../../../src/net/address-guard.ts';
import { fetchImage, type FetchImageOptions } from '../../../src/backends/local/fetch-image.ts';
import type { Resolver } from '../../../src/backends/shared/guarded-request.ts';
import { RenderError } from '../../../src/backends/types.ts';
import { makeWorkDir, scriptedServer, servePng, testPicture, unexpected } from './helpers.ts';
import { waitFor } from '../../helpers/wait.ts';

type Server = Awaited<ReturnType<typeof scriptedServer>>;
let png: Buffer;
let server: Server; // 127.0.0.1: treated as public by `loopbackIsPublic`
let privateServer: Server; // 127.0.0.2: treated as private
let workDir: string;

const isLoopback = (a: string) =>
  a.startsWith('127.') || a === '::1' || a.startsWith('::ffff:127.') || a === '::ffff:7f00:1';
/** The real policy, except that it may never allow a non-loopback address (no traffic leaves the machine). */
const safePublic: AddressPolicy = (a) => {
  const v = publicAddressPolicy(a);
  return v.allowed && !isLoopback(a)
    ? { allowed: false, reason: 'TEST-SAFETY: the real policy allowed it' }
    : v;
};
/** Counts 127.0.0.1 as a public address and 127.0.0.2 as a private one, to test redirects and DNS. */
const loopbackIsPublic: AddressPolicy = (a) =>
  a === '127.0.0.1'
    ? { allowed: true }
    : a === '127.0.0.2'
      ? { allowed: false, reason: 'a private address' }
      : safePublic(a);

async function failure(url: string, opts: Partial<FetchImageOptions> = {}): Promise<RenderError> {
  try {
    await fetchImage(url, { workDir, allowPrivate: false, policy: safePublic, ...opts });
  } catch (err) {
    expect(err).toBeInstanceOf(RenderError);
    return err as RenderError;
  }
  throw new Error(`fetching ${url} succeeded`);
}

beforeAll(async () => {
  png = await testPicture(320, 180, [200, 90, 40]);
  const slowBody: Parameters<typeof scriptedServer>[0][string] = (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
    res.write(png.subarray(0, 100)); // then nothing: the body never completes
  };
  server = await scriptedServer({
    '/a.png': servePng(png),
    '/redirect-1': (_q, r) => r.writeHead(302, { location: '/a.png' }).end(),
    '/redirect-2': (_q, r) => r.writeHead(301, { location: '/redirect-1' }).end(),
    '/redirect-3': (_q, r) => r.writeHead(307, { location: '/redirect-2' }).end(),
    '/redirect-4': (_q, r) => r.writeHead(308, { location: '/redirect-3' }).end(),
    '/to-private': (_q, r) => r.writeHead(302, { location: privateServer.url('/a.png') }).end(),
    '/to-file': (_q, r) => r.writeHead(302, { location: 'file:///etc/passwd' }).end(),
    '/to-named': (_q, r) =>
      r.writeHead(302, { location: `http://images.example.test:${server.port}/host-echo` }).end(),
    '/host-echo': (q, r) => {
      if (q.headers.host?.startsWith('images.example.test')) servePng(png)(q, r);
      else r.writeHead(400).end();
    },
    '/big-declared': (_q, r) => {
      r.writeHead(200, { 'content-type': 'image/png', 'content-length': 50 * 1024 * 1024 });
      r.write(Buffer.alloc(1024));
    },
    '/big-chunked': (_q, r) => {
      r.writeHead(200, { 'content-type': 'image/png' });
      const chunk = Buffer.alloc(64 * 1024, 7);
      let sent = 0;
      const pump = () => {
        while (sent < 50 * 1024 * 1024) {
          sent += chunk.length;
          if (!r.write(chunk)) {
            r.once('drain', pump);
            return;
          }
        }
        r.end();
      };
      r.on('close', () => {
        bigChunkedClosed = true;
        bigChunkedSent = sent;
      });
      pump();
    },
    '/slow': slowBody,
    '/slow-headers': () => {
      /* never answers */
    },
    '/html': (_q, r) =>
      r.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>hello</body></html>'),
    '/svg': (_q, r) =>
      r
        .writeHead(200, { 'content-type': 'image/svg+xml' })
        .end(
          '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>',
        ),
    '/truncated.png': (_q, r) =>
      r
        .writeHead(200, { 'content-type': 'image/png' })
        .end(png.subarray(0, Math.floor(png.length / 2))),
    // The handlers answer once their picture is made; a failure to make it is the test's, not the server's.
    '/huge-pixels.png': (q, r) => {
      void sharp({ create: { width: 5000, height: 5000, channels: 3, background: '#123456' } })
        .png()
        .toBuffer()
        .then((b) => servePng(b)(q, r));
    },
    '/rotated.jpg': (q, r) => {
      void testPicture(300, 100, [20, 200, 90])
        .then((p) => sharp(p).jpeg().withMetadata({ orientation: 6 }).toBuffer())
        .then((b) => r.writeHead(200, { 'content-type': 'image/jpeg' }).end(b));
    },
    '/gone': (_q, r) => r.writeHead(404).end('no'),
    '/forbidden': (_q, r) => r.writeHead(403).end('no'),
    '/busy': (_q, r) => r.writeHead(503).end('busy'),
    '/throttled': (_q, r) => r.writeHead(429).end('slow down'),
    '/reset': (q) => q.socket.destroy(),
    '/reset-mid-body': (_q, r) => {
      r.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
      r.write(png.subarray(0, 200), () => r.socket?.destroy());
    },
  });
  privateServer = await scriptedServer({ '/a.png': servePng(png) }, '127.0.0.2');
  workDir = makeWorkDir();
});

let bigChunkedSent = 0;
let bigChunkedClosed = false;

afterAll(async () => {
  await server.close();
  await privateServer.close();
  fs.rmSync(workDir, { recursive: true, force: true });
});

describe('address guard (allowPrivate false)', () => {
  const port = () => server.port;
  it.each([
    ['127.0.0.1', () => `http://127.0.0.1:${port()}/a.png`],
    ['127.1', () => `http://127.1:${port()}/a.png`],
    ['0x7f.0.0.1', () => `http://0x7f.0.0.1:${port()}/a.png`],
    ['2130706433', () => `http://2130706433:${port()}/a.png`],
    ['017700000001', () => `http://017700000001:${port()}/a.png`],
    ['[::1]', () => `http://[::1]:${port()}/a.png`],
    ['[::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${port()}/a.png`],
    ['localhost', () => `http://localhost:${port()}/a.png`],
    ['0.0.0.0', () => `http://0.0.0.0:${port()}/a.png`],
  ])('refuses %s with the default policy and never connects', async (_name, url) => {
    const before = server.hits['/a.png'] ?? 0;
    const err = await fetchImage(url(), { workDir, allowPrivate: false }).then(
      unexpected,
      (e: unknown) => e as RenderError,
    );
    expect(err).toBeInstanceOf(RenderError);
    expect(err).toMatchObject({ code: 'INPUT_URL_REFUSED', retryable: false });
    expect(err.message).toMatch(/loopback|this network|unspecified/);
    expect(server.hits['/a.png'] ?? 0).toBe(before);
  });

  it.each([
    ['10.0.0.1', 'http://10.0.0.1/a.png', /private/],
    ['172.16.5.4', 'http://172.16.5.4/a.png', /private/],
    ['192.168.0.1', 'http://192.168.0.1/a.png', /private/],
    ['100.64.0.1', 'http://100.64.0.1/a.png', /carrier-grade/],
    ['169.254.169.254', 'http://169.254.169.254/latest/meta-data/', /link-local/],
    ['[fd00::1]', 'http://[fd00::1]/a.png', /unique-local/],
    ['[fe80::1]', 'http://[fe80::1]/a.png', /link-local/],
    ['[64:ff9b::a9fe:a9fe]', 'http://[64:ff9b::a9fe:a9fe]/', /link-local.*NAT64/],
  ])('refuses %s', async (_name, url, reason) => {
    const err = await failure(url);
    expect(err).toMatchObject({ code: 'INPUT_URL_REFUSED', retryable: false });
    expect(err.message).toMatch(reason);
  });

  it('refuses a host name that resolves to a private address, checking after DNS', async () => {
    const resolve: Resolver = () => Promise.resolve([{ address: '10.1.2.3', family: 4 }]);
    const err = await failure('http://innocent.example.test/a.png', { resolve });
    expect(err.code).toBe('INPUT_URL_REFUSED');
    expect(err.message).toMatch(/innocent\.example\.test\/a\.png resolves to a private address/);
  });

  it('refuses a name with any private address among its answers', async () => {
    const resolve: Resolver = () =>
      Promise.resolve([
        { address: '127.0.0.1', family: 4 },
        { address: '127.0.0.2', family: 4 },
      ]);
    const err = await failure(`http://mixed.example.test:${server.port}/a.png`, {
      resolve,
      policy: loopbackIsPublic,
    });
    expect(err.code).toBe('INPUT_URL_REFUSED');
  });

  it('connects to the checked address, not to whatever DNS says later', async () => {
    let calls = 0;
    // First answer passes the check; a rebinding DNS would answer differently on the next lookup.
    const resolve: Resolver = () =>
      Promise.resolve(
        calls++ === 0
          ? [{ address: '127.0.0.1', family: 4 }]
          : [{ address: '127.0.0.2', family: 4 }],
      );
    const before = privateServer.hits['/a.png'] ?? 0;
    const img = await fetchImage(`http://images.example.test:${server.port}/host-echo`, {
      workDir,
      policy: loopbackIsPublic,
      resolve,
    });
    expect(img.width).toBe(320);
    expect(calls).toBe(1);
    expect(privateServer.hits['/a.png'] ?? 0).toBe(before);
  });

  it('checks every redirect: an allowed server cannot redirect into a private range', async () => {
    const before = privateServer.hits['/a.png'] ?? 0;
    const err = await failure(server.url('/to-private'), { policy: loopbackIsPublic });
    expect(err).toMatchObject({ code: 'INPUT_URL_REFUSED', retryable: false });
    expect(privateServer.hits['/a.png'] ?? 0).toBe(before);
  });

  it('re-resolves and pins named redirect targets', async () => {
    const resolve: Resolver = (host) =>
      Promise.resolve(host === 'images.example.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
    const img = await fetchImage(server.url('/to-named'), {
      workDir,
      policy: loopbackIsPublic,
      resolve,
    });
    expect(img.height).toBe(180);
  });

  it('refuses a redirect to another scheme', async () => {
    const err = await failure(server.url('/to-file'), { policy: loopbackIsPublic });
    expect(err.code).toBe('INPUT_URL_REFUSED');
  });

  it('lets allowPrivate lift the address check only', async () => {
    const img = await fetchImage(server.url('/a.png'), { workDir, allowPrivate: true });
    expect(img).toMatchObject({ width: 320, height: 180 });
    const err = await failure(server.url('/big-declared'), { allowPrivate: true, maxBytes: 1000 });
    expect(err.code).toBe('INPUT_TOO_LARGE');
  });
});

describe('fetching (loopback counted as public)', () => {
  const ok = (p: string, opts: Partial<FetchImageOptions> = {}) =>
    fetchImage(server.url(p), { workDir, policy: loopbackIsPublic, ...opts });
  const bad = (p: string, opts: Partial<FetchImageOptions> = {}) =>
    failure(server.url(p), { policy: loopbackIsPublic, ...opts });

  it('writes the image into the work directory as a PNG', async () => {
    const img = await ok('/a.png');
    expect(path.dirname(img.path)).toBe(workDir);
    expect((await sharp(img.path).metadata()).format).toBe('png');
    expect(img).toMatchObject({ width: 320, height: 180 });
  });

  it('applies EXIF orientation', async () => {
    const img = await ok('/rotated.jpg');
    expect(img).toMatchObject({ width: 100, height: 300 });
  });

  it('follows up to 3 redirects, and no more', async () => {
    expect((await ok('/redirect-3')).width).toBe(320);
    const err = await bad('/redirect-4');
    expect(err).toMatchObject({ code: 'INPUT_TOO_MANY_REDIRECTS', retryable: false });
  });

  it('stops at once when Content-Length is over the limit', async () => {
    const t0 = Date.now();
    const err = await bad('/big-declared', { maxBytes: 1024 * 1024 });
    expect(err).toMatchObject({ code: 'INPUT_TOO_LARGE', retryable: false });
    expect(Date.now() - t0).toBeLessThan(15_000); // not read to the end, nor held to the 30 s fetch timeout
  });

  it('stops while streaming when a body without Content-Length grows over the limit', async () => {
    const err = await bad('/big-chunked', { maxBytes: 1024 * 1024 });
    expect(err).toMatchObject({ code: 'INPUT_TOO_LARGE', retryable: false });
    await waitFor('the server to see its connection closed', () => bigChunkedClosed);
    expect(bigChunkedSent).toBeGreaterThan(1024 * 1024);
    expect(bigChunkedSent).toBeLessThan(20 * 1024 * 1024); // the connection was cut, not read to the end
  });

  it('times out a body that stalls, retryably', async () => {
    const t0 = Date.now();
    const err = await bad('/slow', { timeoutMs: 400 });
    expect(err).toMatchObject({ code: 'INPUT_FETCH_TIMEOUT', retryable: true });
    expect(Date.now() - t0).toBeLessThan(15_000); // the 0.4 s limit, not the default 30 s
    expect((await bad('/slow-headers', { timeoutMs: 300 })).code).toBe('INPUT_FETCH_TIMEOUT');
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const t0 = Date.now();
    const err = await bad('/slow', { signal: controller.signal });
    expect(err).toMatchObject({ code: 'RENDER_CANCELLED', retryable: false });
    expect(Date.now() - t0).toBeLessThan(15_000); // the abort, not the default 30 s fetch timeout
  });

  it('passes on the reason of the caller abort when it is a RenderError', async () => {
    const controller = new AbortController();
    setTimeout(
      () => controller.abort(new RenderError('RENDER_TIMEOUT', 'render deadline', true)),
      50,
    );
    expect(await bad('/slow', { signal: controller.signal })).toMatchObject({
      code: 'RENDER_TIMEOUT',
      retryable: true,
    });
  });

  it.each(['/html', '/svg', '/truncated.png'])('refuses %s as not an image', async (p) => {
    expect(await bad(p)).toMatchObject({ code: 'INPUT_NOT_IMAGE', retryable: false });
  });

  it('refuses an image over the pixel limit', async () => {
    const err = await bad('/huge-pixels.png', { maxPixels: 20_000_000 });
    expect(err).toMatchObject({ code: 'INPUT_TOO_LARGE', retryable: false });
    expect(err.message).toMatch(/5000×5000/);
  });

  it('fails 4xx permanently and 5xx, 429 retryably', async () => {
    expect(await bad('/gone')).toMatchObject({ code: 'INPUT_NOT_FOUND', retryable: false });
    expect(await bad('/forbidden')).toMatchObject({ code: 'INPUT_NOT_FOUND', retryable: false });
    expect(await bad('/busy')).toMatchObject({ code: 'INPUT_FETCH_FAILED', retryable: true });
    expect(await bad('/throttled')).toMatchObject({ code: 'INPUT_FETCH_FAILED', retryable: true });
  });

  it('fails connection resets and refusals retryably', async () => {
    expect(await bad('/reset')).toMatchObject({ code: 'INPUT_FETCH_FAILED', retryable: true });
    expect(await bad('/reset-mid-body')).toMatchObject({
      code: 'INPUT_FETCH_FAILED',
      retryable: true,
    });
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await failure(`http://127.0.0.1:${port}/a.png`, { policy: loopbackIsPublic });
    expect(err).toMatchObject({ code: 'INPUT_FETCH_FAILED', retryable: true });
    expect(err.message).toMatch(/refused/);
  });

  it('fails a host that does not exist permanently', async () => {
    const resolve: Resolver = () =>
      Promise.reject(Object.assign(new Error('nx'), { code: 'ENOTFOUND' }));
    expect(await failure('http://nowhere.example.test/a.png', { resolve })).toMatchObject({
      code: 'INPUT_NOT_FOUND',
      retryable: false,
    });
  });

  it('keeps the query string out of every message', async () => {
    for (const p of [
      '/gone?token=SECRET123',
      '/busy?sig=SECRET123',
      '/html?key=SECRET123',
      '/slow?x=SECRET123',
    ]) {
      const err = await bad(p, { timeoutMs: 300 });
      expect(err.message).not.toContain('SECRET123');
      expect(err.message).toContain(`127.0.0.1:${server.port}${p.split('?')[0]}`);
    }
    const refused = await failure(`http://127.0.0.1:${server.port}/a.png?token=SECRET123`, {});
    expect(refused.message).not.toContain('SECRET123');
  });
});
