// The guarded fetcher at its edges, seen from the server's side: refused addresses are never connected to
// (a dual-stack listener catches every loopback spelling), limits cut the connection before the server has
// sent everything, and a body that trickles in keeps the fetch alive no longer than its whole time limit.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicAddressPolicy, type AddressPolicy } from '../../../src/net/address-guard.ts';
import { fetchImage, type FetchImageOptions } from '../../../src/backends/local/fetch-image.ts';
import { RenderError } from '../../../src/backends/types.ts';
import { waitFor } from '../../helpers/wait.ts';

const SECRET = 'token=s3cr3t-do-not-log';
const BIG = 64 * 1024 * 1024;

interface Sending {
  sent: number;
  closed: boolean;
  finished: boolean;
}
const sending: Record<string, Sending> = {};
let connections = 0;
let server: http.Server; // listens on :: (dual stack): 127.x, ::1, ::ffff:127.0.0.1 and 0.0.0.0 all reach it
let port = 0;
let workDir = '';

/** Streams `total` bytes respecting backpressure, recording how far it got before the connection closed. */
function pump(
  key: string,
  res: http.ServerResponse,
  total: number,
  headers: http.OutgoingHttpHeaders,
): void {
  const state: Sending = { sent: 0, closed: false, finished: false };
  sending[key] = state;
  res.on('close', () => {
    state.closed = true;
    state.finished = res.writableFinished;
  });
  res.writeHead(200, { 'content-type': 'image/png', ...headers });
  const chunk = Buffer.alloc(64 * 1024, 0x42);
  const next = () => {
    while (state.sent < total && !state.closed) {
      state.sent += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', next);
        return;
      }
    }
    if (!state.closed) res.end();
  };
  next();
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0];
    if (p === '/declared') return pump(p, res, BIG, { 'content-length': BIG });
    if (p === '/chunked') return pump(p, res, BIG, {});
    if (p === '/trickle') {
      const state: Sending = { sent: 0, closed: false, finished: false };
      sending[p] = state;
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 1000 });
      const timer = setInterval(() => {
        state.sent++;
        res.write(Buffer.from([0x89]));
      }, 200);
      res.on('close', () => {
        clearInterval(timer);
        state.closed = true;
        state.finished = res.writableFinished;
      });
      return;
    }
    res.writeHead(404).end();
  });
  server.on('connection', (s: Socket) => {
    connections++;
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen({ port: 0, host: '::', ipv6Only: false }, r));
  port = (server.address() as AddressInfo).port;
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-fetch-edges-'));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  fs.rmSync(workDir, { recursive: true, force: true });
});

async function failure(url: string, opts: Partial<FetchImageOptions> = {}): Promise<RenderError> {
  try {
    await fetchImage(url, { workDir, allowPrivate: false, ...opts });
  } catch (err) {
    expect(err).toBeInstanceOf(RenderError);
    const e = err as RenderError;
    expect(e.message).not.toContain('s3cr3t'); // neither query strings nor credentials reach messages
    return e;
  }
  throw new Error(`fetching ${url} succeeded`);
}

// The real policy, except that a non-loopback address it wrongly allowed is refused with a marker, so a
// broken guard fails these tests without sending anything off this machine.
const MARK = 'TEST-SAFETY';
const isLoopback = (a: string) =>
  /^127\./.test(a) || a === '::1' || a === '0.0.0.0' || /^::ffff:(127\.|7f)/.test(a);
const realPolicy: AddressPolicy = (a) => {
  const v = publicAddressPolicy(a);
  return v.allowed && !isLoopback(a) ? { allowed: false, reason: MARK } : v;
};

describe('refused addresses (allowPrivate false)', () => {
  const forms = [
    '127.0.0.1',
    '127.1',
    '0x7f.0.0.1',
    '2130706433',
    '017700000001',
    '[::1]',
    '[::ffff:127.0.0.1]',
    '10.0.0.1',
    '172.16.0.1',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.169.254',
    '0.0.0.0',
    'localhost',
    '[fc00::1]',
    '[fe80::1]',
  ];
  it.each(forms)('refuses %s permanently without connecting', async (host) => {
    const before = connections;
    const t0 = Date.now();
    const err = await failure(`http://${host}:${port}/img.png?${SECRET}`, { policy: realPolicy });
    expect(err).toMatchObject({ code: 'INPUT_URL_REFUSED', retryable: false });
    expect(err.message).not.toContain(MARK);
    expect(Date.now() - t0).toBeLessThan(15_000); // refused, not left to a connection's timeout
    expect(connections).toBe(before);
  });

  it('reaches the same server through the same spellings once private addresses are allowed', async () => {
    // The control for the test above: these addresses do lead to the listener.
    for (const host of [
      '127.1',
      '0x7f.0.0.1',
      '2130706433',
      '017700000001',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '0.0.0.0',
      'localhost',
    ]) {
      const before = connections;
      const err = await failure(`http://${host}:${port}/missing.png`, { allowPrivate: true });
      expect(err).toMatchObject({ code: 'INPUT_NOT_FOUND' });
      expect(connections).toBe(before + 1);
    }
  });
});

describe('schemes and credentials', () => {
  it.each([
    'file:///etc/passwd',
    'ftp://127.0.0.1/a.png',
    'data:image/png;base64,iVBORw0KGgo=',
    'gopher://127.0.0.1/1',
    'javascript:alert(1)',
    'ws://127.0.0.1/a.png',
    'not a url at all',
    'http://user:s3cr3t@127.0.0.1/a.png',
  ])('refuses %s permanently', async (url) => {
    const before = connections;
    expect(await failure(url, { allowPrivate: true })).toMatchObject({
      code: 'INPUT_URL_REFUSED',
      retryable: false,
    });
    expect(connections).toBe(before);
  });
});

describe('limits cut the connection', () => {
  it.each(['/declared', '/chunked'])(
    'stops %s over maxBytes before the server has sent it all',
    async (p) => {
      const err = await failure(`http://127.0.0.1:${port}${p}?${SECRET}`, {
        allowPrivate: true,
        maxBytes: 256 * 1024,
      });
      expect(err).toMatchObject({ code: 'INPUT_TOO_LARGE', retryable: false });
      await waitFor('the connection closed', () => sending[p]?.closed === true);
      expect(sending[p]).toMatchObject({ closed: true, finished: false });
      expect(sending[p].sent).toBeLessThan(BIG / 2);
    },
  );

  it('times out a body that trickles a byte every 200 ms, retryably, at the whole-fetch limit', async () => {
    const t0 = Date.now();
    const err = await failure(`http://127.0.0.1:${port}/trickle?${SECRET}`, {
      allowPrivate: true,
      timeoutMs: 1000,
    });
    const elapsed = Date.now() - t0;
    expect(err).toMatchObject({ code: 'INPUT_FETCH_TIMEOUT', retryable: true });
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(15_000); // the trickle alone would take 200 s
    await waitFor('the connection closed', () => sending['/trickle']?.closed === true);
    expect(sending['/trickle'].closed).toBe(true);
    expect(sending['/trickle'].sent).toBeGreaterThanOrEqual(3); // it kept sending: no idle gap to time out on
    expect(sending['/trickle'].sent).toBeLessThan(1000);
  });
});
