// Result files named by a model server (docs/api.md "Abuse limits", "Result files from backends"), with
// RENDERGATE_ALLOW_PRIVATE_URLS off: a result on the Cog server's own origin is fetched as it is; one
// anywhere else that is (or redirects to) a loopback or internal address is refused without being
// fetched, and the internal page's body never reaches the client's error. The redirect chain itself is
// checked hop by hop against real servers, with a policy that treats 127.0.0.2 as public.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cogFake, type CogFake } from '../../fakes/cog.ts';
import { fetchResult } from '../../../src/backends/shared/result-fetch.ts';
import { RenderError } from '../../../src/backends/types.ts';
import { publicAddressPolicy } from '../../../src/net/address-guard.ts';
import { create, finalOk, remoteFixture, videoModel } from './harness.ts';

const SECRET_PAGE = 'internal-admin-page: root password hunter2';
let cog: CogFake;
let internal: http.Server;
let internalHits = 0;
let internalPort = 0;
const f = remoteFixture({
  before: async () => {
    cog = await cogFake();
    // an internal service: answers its secret page to whoever reaches it
    internal = http.createServer((req, res) => {
      internalHits++;
      if (req.url === '/redirect')
        res.writeHead(302, { location: `http://127.0.0.1:${internalPort}/page` }).end();
      else res.writeHead(500, { 'content-type': 'text/plain' }).end(SECRET_PAGE);
    });
    await new Promise<void>((r) => internal.listen(0, '127.0.0.1', r));
    internalPort = (internal.address() as { port: number }).port;
  },
  models: () => [videoModel('t/cog', { driver: 'cog', url: cog.base }, { maxAttempts: 1 })],
  env: { RENDERGATE_ALLOW_PRIVATE_URLS: '0' },
  after: async () => {
    await cog.close();
    await new Promise((r) => internal.close(r));
  },
});

describe('through the API', () => {
  it("a result on the server's own origin is fetched as it is", async () => {
    cog.script.push({ kind: 'url' });
    const g = await create(f, 't/cog', { prompt: 'own origin' });
    await finalOk(f, g.id);
  });

  it('a result elsewhere on loopback is refused unfetched, refunded, and no body is echoed', async () => {
    for (const url of [
      `http://localhost:${internalPort}/page`,
      `http://localhost:${internalPort}/redirect`,
    ]) {
      cog.textOutput = [url];
      const before = internalHits;
      const g = await create(f, 't/cog', { prompt: 'elsewhere' });
      const done = await f.api.waitFinal(f.key, g.id);
      expect([done.status, done.error.code, done.refundedCents]).toEqual([
        'failed',
        'BACKEND_BAD_RESPONSE',
        g.costCents,
      ]);
      expect(done.error.message).toContain('a loopback address');
      expect(done.error.message).not.toContain('hunter2');
      expect(internalHits).toBe(before); // never connected
    }
    cog.textOutput = null;
  });
});

describe('redirect by redirect', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-result-'));
  let front: http.Server;
  let frontBase = '';
  let hops = 0;
  // 127.0.0.2 stands for a public host; everything else keeps the real rules
  const policy = (a: string) =>
    a === '127.0.0.2' ? { allowed: true as const } : publicAddressPolicy(a);
  beforeAll(async () => {
    front = http.createServer((req, res) => {
      hops++;
      const m = /^\/chain\/(\d+)$/.exec(req.url ?? '');
      if (m && Number(m[1]) > 0)
        res.writeHead(302, { location: `/chain/${Number(m[1]) - 1}` }).end();
      else if (m) res.writeHead(200, { 'content-type': 'video/mp4' }).end(Buffer.alloc(100, 1));
      else if (req.url === '/to-internal')
        res.writeHead(302, { location: `http://127.0.0.1:${internalPort}/page` }).end();
      else res.writeHead(500).end(SECRET_PAGE);
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.2', r));
    frontBase = `http://127.0.0.2:${(front.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => front.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const opts = (file: string) => ({
    file: path.join(dir, file),
    limitBytes: 1000,
    signal: AbortSignal.timeout(20_000),
    origin: null,
    allowPrivate: false,
    policy,
    checkType: () => undefined,
    tooLarge: () => new RenderError('OUTPUT_TOO_LARGE', 'too large', false),
    what: 'test',
  });

  it('follows 5 checked redirects, not 6; a hop to an internal address is refused before it is reached', async () => {
    await fetchResult(`${frontBase}/chain/5`, opts('five'));
    expect(fs.statSync(path.join(dir, 'five')).size).toBe(100);
    await expect(fetchResult(`${frontBase}/chain/6`, opts('six'))).rejects.toMatchObject({
      message: expect.stringContaining('more than 5 redirects'),
    });
    const before = internalHits;
    hops = 0;
    const e = await fetchResult(`${frontBase}/to-internal`, opts('internal')).catch((x) => x);
    expect(e).toBeInstanceOf(RenderError);
    expect(e.message).toContain('a loopback address');
    expect(hops).toBe(1);
    expect(internalHits).toBe(before);
    // an error answer's body is never read into the error
    const five = await fetchResult(`${frontBase}/boom`, opts('boom')).catch((x) => x);
    expect(five.message).toContain('HTTP 500');
    expect(five.message).not.toContain('hunter2');
  });
});
