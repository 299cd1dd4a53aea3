// Quotes answered before the framework (src/http/fast-answers.ts, fast-quote.ts) must be the route's
// answers: two services on one database, one with the fast answers and one without
// (RENDERGATE_NO_FAST_ANSWERS), are sent the same quotes over real HTTP and give the same statuses,
// headers (in order) and bodies. Quotes the fast answers read and then leave to Fastify (an invalid
// body, upload inputs, a rate limit not decided in memory) get Fastify's answer from the bytes read;
// the others are never touched. Bodies sent with their headers, after them, or never finished.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fastAnswersOf } from '../../../src/http/server.ts';
import {
  accessLineOf,
  answered,
  answerOf,
  fastAndSlow,
  normal,
  requestCount,
  type FastAndSlow,
} from '../../helpers/fast-answers.ts';
import { awayFromMinuteEdge } from '../../helpers/minute.ts';
import { client, type TestService } from '../../helpers/service.ts';

let both: FastAndSlow;
let fast: TestService;
let slow: TestService;
let key = '';
let accountId = '';

beforeAll(async () => {
  both = await fastAndSlow({ RENDERGATE_REQUEST_TIMEOUT_SECONDS: '2' });
  ({ fast, slow } = both);
  const a = await client(fast.base).account(100);
  key = a.key;
  accountId = a.accountId;
});
afterAll(async () => {
  await both?.stop();
});

const QUOTE = {
  modelId: 'rendergate/image-to-video',
  inputs: { prompt: 'A lighthouse at dusk', image: 'https://example.com/a.png' },
};

type Sent = { headers: Record<string, string>; body: string };
const send = async (base: string, s: Sent, path = '/v1/quote') =>
  answerOf(await fetch(base + path, { method: 'POST', headers: s.headers, body: s.body }));

const fa = () => fastAnswersOf(fast.running.server)!;
const json = (extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${key}`,
  'content-type': 'application/json',
  ...extra,
});
/** The key looked up and a lease of its limit taken on both services just now. */
async function warm() {
  for (const s of [fast, slow]) {
    const r = await send(s.base, { headers: json(), body: JSON.stringify(QUOTE) });
    expect(r.status).toBe(200);
  }
}

/** Writes `parts` to a raw connection, waiting for `gap` between them, and reads one answer. */
function raw(base: string, parts: string[], gapMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const writeAll = async () => {
      for (const [i, p] of parts.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, gapMs));
        sock.write(p);
      }
    };
    const sock = net.connect(Number(new URL(base).port), '127.0.0.1', () => void writeAll());
    sock.on('data', (d) => {
      got += String(d);
      const m = /content-length: (\d+)\r\n[^]*?\r\n\r\n([^]*)$/i.exec(got);
      if (m && Buffer.byteLength(m[2]) >= Number(m[1])) {
        sock.destroy();
        resolve(got);
      }
    });
    sock.on('error', reject);
    sock.on('close', () => resolve(got));
  });
}

describe('fast quotes', () => {
  it('answer a valid quote as the route does, and hand every other body to it', async () => {
    const body = JSON.stringify(QUOTE);
    const taken: Sent[] = [
      { headers: json(), body },
      { headers: json({ 'content-type': 'application/json; charset=utf-8' }), body },
      { headers: json({ 'x-request-id': 'client-id.7' }), body },
      // another quote: computed, then cached
      {
        headers: json(),
        body: JSON.stringify({ ...QUOTE, inputs: { ...QUOTE.inputs, duration: 10 } }),
      },
    ];
    // Read here, answered by Fastify from the bytes read: its errors, its upload check.
    const handed = (base: string): Sent[] => [
      { headers: json(), body: '{"modelId": ' },
      { headers: json(), body: '[]' },
      { headers: json(), body: JSON.stringify({ ...QUOTE, modelId: 'rendergate/nope' }) },
      { headers: json(), body: JSON.stringify({ ...QUOTE, inputs: { prompt: '' } }) },
      { headers: json(), body: JSON.stringify({ ...QUOTE, __proto__x: 1 }).replace('_x', '_') },
      { headers: json(), body: '{"a":"\u00ff"}'.replace('\u00ff', '\\ud800') },
      {
        headers: json(),
        body: JSON.stringify({
          ...QUOTE,
          inputs: { ...QUOTE.inputs, image: `${base}/v1/uploads/upl_${'0'.repeat(32)}` },
        }),
      },
    ];
    // Never read here.
    const left: Array<[Sent, string?]> = [
      [{ headers: json({ 'content-type': 'application/json; charset=UTF-8' }), body }],
      [{ headers: json({ 'content-type': 'text/plain' }), body }],
      [{ headers: json({ prefer: 'wait=1' }), body }],
      [{ headers: json({ 'accept-version': '1.x' }), body }],
      [{ headers: json(), body: JSON.stringify({ ...QUOTE, pad: 'x'.repeat(5000) }) }],
      [{ headers: json({ authorization: 'Bearer rg_live_nope' }), body }],
      [{ headers: { 'content-type': 'application/json' }, body }],
      [{ headers: json(), body }, '/v1/quote?x=1'],
      [{ headers: json(), body }, '/v1/quote/'],
    ];
    await warm();
    let took = 0;
    for (const s of taken) {
      const before = fa().answered;
      const f = normal(await send(fast.base, s), fast.base);
      took += fa().answered - before;
      const o = normal(await send(slow.base, s), slow.base);
      expect({ sent: s, ...f }).toEqual({ sent: s, ...o });
      expect(f.status).toBe(200);
    }
    expect(took).toBeGreaterThan(0);
    let handedOn = 0;
    const [fs, ss] = [handed(fast.base), handed(slow.base)];
    for (const [i, s] of fs.entries()) {
      await warm();
      const before = fa().handedOn;
      const f = normal(await send(fast.base, s), fast.base);
      handedOn += fa().handedOn - before;
      const o = normal(await send(slow.base, ss[i]), slow.base);
      expect({ i, ...f }).toEqual({ i, ...o });
      expect(f.status).toBeGreaterThanOrEqual(400);
    }
    expect(handedOn).toBeGreaterThan(fs.length / 2);
    for (const [s, path] of left) {
      await warm();
      const [a, h] = [fa().answered, fa().handedOn];
      const f = normal(await send(fast.base, s, path), fast.base);
      expect([fa().answered, fa().handedOn]).toEqual([a, h]);
      const o = normal(await send(slow.base, s, path), slow.base);
      expect({ sent: s, path, ...f }).toEqual({ sent: s, path, ...o });
    }
    // The safe id is echoed, as Fastify's genReqId does.
    const echoed = await send(fast.base, taken[2]);
    expect(echoed.headers).toContainEqual(['x-request-id', 'client-id.7']);
  });

  it('read a body sent with its headers or after them, and drop one never finished', async () => {
    const body = JSON.stringify(QUOTE);
    const head = (length: number) =>
      `POST /v1/quote HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
    const bodyOf = (answer: string) => answer.split('\r\n\r\n')[1];
    const expected = bodyOf(await raw(slow.base, [head(body.length) + body], 0));
    expect(JSON.parse(expected)).toMatchObject({ modelId: QUOTE.modelId, currency: 'EUR' });
    // One packet; then the headers, and the body 100 ms later (read through the stream's events).
    for (const [parts, gap] of [
      [[head(body.length) + body], 0],
      [[head(body.length), body], 100],
      [[head(body.length), body.slice(0, 9), body.slice(9)], 100],
    ] as const) {
      await warm();
      // Read here: answered here, or handed to Fastify when no lease of the limit is in memory.
      const read = () => fa().answered + fa().handedOn;
      const before = read();
      const answer = await raw(fast.base, [...parts], gap);
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(bodyOf(answer)).toBe(expected);
      expect({ parts: parts.length, read: read() - before }).toEqual({
        parts: parts.length,
        read: 1,
      });
    }
    // A body that stops halfway is cut at the request's deadline (2 s here), with nothing answered.
    await warm();
    const [a, h] = [fa().answered, fa().handedOn];
    const t0 = Date.now();
    const cut = await raw(fast.base, [head(body.length) + body.slice(0, 10)], 0);
    expect(cut).toBe('');
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect([fa().answered, fa().handedOn]).toEqual([a, h]);
  }, 30_000);

  it('count against the key’s rate limit as the route does, and leave the 429 to it', async () => {
    const api = client(fast.base);
    const LIMIT = 130;
    const statuses = async (s: TestService) => {
      const k = await api.admin('POST', `/accounts/${accountId}/keys`, {
        rateLimitPerMinute: LIMIT,
      });
      const sent = { headers: json({ authorization: `Bearer ${k.key as string}` }), body: '' };
      sent.body = JSON.stringify(QUOTE);
      await awayFromMinuteEdge(30_000);
      const before = answered(s);
      const out: Array<[number, string | undefined]> = [];
      for (let i = 0; i < LIMIT + 2; i++) {
        const a = await send(s.base, sent);
        out.push([a.status, a.headers.find(([h]) => h === 'ratelimit')?.[1].replace(/;t=\d+/, '')]);
      }
      return { out, taken: answered(s) - before };
    };
    const f = await statuses(fast);
    const s = await statuses(slow);
    expect(f.out).toEqual(s.out);
    expect(f.out.filter(([status]) => status === 200).length).toBe(LIMIT);
    expect(f.out.slice(LIMIT).map(([status]) => status)).toEqual([429, 429]);
    expect(f.taken).toBeGreaterThan(LIMIT / 2);
  });

  it('write the route’s access line and count in its metrics', async () => {
    const body = JSON.stringify(QUOTE);
    let taken = await send(fast.base, { headers: json(), body });
    let tookOne = false;
    for (let i = 0; i < 20 && !tookOne; i++) {
      const before = fa().answered;
      taken = await send(fast.base, { headers: json(), body });
      tookOne = fa().answered === before + 1;
    }
    expect(tookOne).toBe(true);
    const before = fa().answered;
    const viaFastify = await send(fast.base, { headers: json({ prefer: 'x' }), body });
    expect(fa().answered).toBe(before);
    const mine = accessLineOf(both.lines, taken);
    const theirs = accessLineOf(both.lines, viaFastify);
    expect(Object.keys(mine)).toEqual(Object.keys(theirs));
    expect(Object.keys(mine.req as object)).toEqual(Object.keys(theirs.req as object));
    expect(mine).toMatchObject({
      level: 30,
      req: { method: 'POST', url: '/v1/quote', remoteAddress: '127.0.0.1' },
      res: { statusCode: 200 },
    });
    expect(await requestCount(fast.base, '/v1/quote', 'POST', 200)).toBeGreaterThanOrEqual(
      fa().answered,
    );
  });
});
