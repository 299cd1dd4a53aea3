// Polls answered before the framework (src/http/fast-answers.ts) must be the route's answers: two
// services on one database, one with the fast answers and one without (RENDERGATE_NO_FAST_ANSWERS),
// are sent the same requests over real HTTP, and give the same statuses, headers (in order) and
// bodies; the cases the fast answers leave to Fastify stay Fastify's. Their access lines and metrics
// are those of the route too.
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
let gen = '';
let other = '';
let key = '';
let accountId = '';
let otherKey = '';

beforeAll(async () => {
  both = await fastAndSlow();
  ({ fast, slow } = both);
  const api = client(fast.base);
  const a = await api.account(100);
  const b = await api.account(100);
  key = a.key;
  accountId = a.accountId;
  otherKey = b.key;
  const made = async (k: string) => {
    const r = await api.call('POST', '/v1/generations', {
      key: k,
      body: { modelId: 'rendergate/shot-list', inputs: { text: 'A gull lands. The tide turns.' } },
      headers: { 'idempotency-key': `fast-answers-${k}` },
    });
    expect(r.status).toBe(202);
    return (await api.waitFinal(k, r.json.id)).id as string;
  };
  gen = await made(key);
  other = await made(otherKey);
});
afterAll(async () => {
  await both?.stop();
});

const send = async (base: string, method: string, path: string, headers: Record<string, string>) =>
  answerOf(await fetch(base + path, { method, headers }));

describe('fast answers', () => {
  it('answer a cached poll as the route does, and leave every other case to it', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const poll = `/v1/generations/${gen}`;
    // Both services have looked the key and the generation up once.
    for (const s of [fast, slow]) expect((await send(s.base, 'GET', poll, auth)).status).toBe(200);
    const taken: Array<[string, string, Record<string, string>]> = [
      ['GET', poll, auth],
      ['GET', poll, { ...auth, 'x-request-id': 'client-id.42' }],
      ['GET', poll, { ...auth, 'x-request-id': 'not safe' }],
    ];
    const left: Array<[string, string, Record<string, string>]> = [
      ['GET', `${poll}?x=1`, auth],
      ['GET', `${poll}/`, auth],
      ['GET', poll, { ...auth, prefer: 'wait=1' }],
      ['GET', poll, { ...auth, 'accept-version': '1.x' }],
      ['HEAD', poll, auth],
      ['GET', poll, {}],
      ['GET', poll, { authorization: 'Bearer rg_live_nope' }],
      ['GET', poll, { authorization: `Bearer ${otherKey}` }],
      ['GET', `/v1/generations/${other}`, auth],
      ['GET', `/v1/generations/gen_${'0'.repeat(32)}`, auth],
      ['GET', `/v1/generations/${gen.toUpperCase()}`, auth],
    ];
    // A request the fast answers may take is taken when the key was looked up within the last half
    // second and a lease of its rate limit is in memory; otherwise Fastify answers it, the same way.
    let took = 0;
    for (const [method, path, headers] of taken) {
      const before = answered(fast);
      const f = normal(await send(fast.base, method, path, headers));
      took += answered(fast) - before;
      const s = normal(await send(slow.base, method, path, headers));
      expect({ method, path, sent: headers, ...f }).toEqual({ method, path, sent: headers, ...s });
    }
    expect(took).toBeGreaterThan(0);
    // The others are never taken.
    for (const [method, path, headers] of left) {
      const before = answered(fast);
      const f = normal(await send(fast.base, method, path, headers));
      expect(answered(fast)).toBe(before);
      const s = normal(await send(slow.base, method, path, headers));
      expect({ method, path, sent: headers, ...f }).toEqual({ method, path, sent: headers, ...s });
    }
    expect(fastAnswersOf(slow.running.server)).toBeNull();
    // The safe id is echoed, the unsafe one replaced, as Fastify's genReqId does.
    const echoed = await send(fast.base, 'GET', poll, { ...auth, 'x-request-id': 'client-id.42' });
    expect(echoed.headers).toContainEqual(['x-request-id', 'client-id.42']);
  });

  it('count against the key’s rate limit as the route does, and leave the 429 to it', async () => {
    const api = client(fast.base);
    const g = `/v1/generations/${gen}`;
    const LIMIT = 130;
    const statuses = async (s: TestService) => {
      // A second key of the generation's account. Its requests are taken here while the process holds
      // a lease of its limit (src/admission/rate-limits.ts); the others go through Fastify's hook, which
      // takes the next lease; past the limit, Fastify answers the 429.
      const k = await api.admin('POST', `/accounts/${accountId}/keys`, {
        rateLimitPerMinute: LIMIT,
      });
      expect((await send(s.base, 'GET', g, { authorization: `Bearer ${key}` })).status).toBe(200);
      await awayFromMinuteEdge(30_000);
      const before = answered(s);
      const out: Array<[number, string | undefined]> = [];
      for (let i = 0; i < LIMIT + 2; i++) {
        const a = await send(s.base, 'GET', g, { authorization: `Bearer ${k.key as string}` });
        out.push([a.status, a.headers.find(([h]) => h === 'ratelimit')?.[1].replace(/;t=\d+/, '')]);
      }
      return { out, taken: answered(s) - before };
    };
    const f = await statuses(fast);
    const s = await statuses(slow);
    expect(f.out).toEqual(s.out);
    expect(f.out.filter(([status]) => status === 200).length).toBe(LIMIT);
    expect(f.out.slice(LIMIT).map(([status]) => status)).toEqual([429, 429]);
    expect(f.out[LIMIT - 1][1]).toBe('"default";r=0');
    expect(f.taken).toBeGreaterThan(LIMIT / 2);
    expect(s.taken).toBe(0);
  });

  it('write the route’s access line and count in its metrics', async () => {
    const poll = `/v1/generations/${gen}`;
    const auth = { authorization: `Bearer ${key}` };
    // One poll taken here (retried until the key and a lease are in memory), one left to Fastify.
    let taken = await send(fast.base, 'GET', poll, auth);
    let tookOne = false;
    for (let i = 0; i < 20 && !tookOne; i++) {
      const before = answered(fast);
      taken = await send(fast.base, 'GET', poll, auth);
      tookOne = answered(fast) === before + 1;
    }
    expect(tookOne).toBe(true);
    const before = answered(fast);
    const viaFastify = await send(fast.base, 'GET', `${poll}?via=fastify`, auth);
    expect(answered(fast)).toBe(before);
    const mine = accessLineOf(both.lines, taken);
    const theirs = accessLineOf(both.lines, viaFastify);
    // The same members in the same order, request and answer alike.
    expect(Object.keys(mine)).toEqual(Object.keys(theirs));
    expect(Object.keys(mine.req as object)).toEqual(Object.keys(theirs.req as object));
    expect(mine).toMatchObject({
      level: 30,
      req: { method: 'GET', url: poll, host: new URL(fast.base).host, remoteAddress: '127.0.0.1' },
      res: { statusCode: 200 },
    });
    expect(typeof mine.responseTime).toBe('number');
    expect(typeof (mine.req as { remotePort: unknown }).remotePort).toBe('number');
    const count = await requestCount(fast.base, '/v1/generations/:id', 'GET', 200);
    // Every 200 poll of this file on this service, whoever answered it.
    expect(count).toBeGreaterThanOrEqual(answered(fast));
  });
});
