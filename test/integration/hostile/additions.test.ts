// The hostile suite over the second tranche's endpoints: odd ids at uploads, cancel and webhook
// endpoints; arbitrary JSON at POST /v1/webhook-endpoints; arbitrary bytes and content types at
// POST /v1/uploads; junk Prefer headers on reads and creates; junk query strings on the new lists.
// Every answer inside the contract (harness.ts), never a 5xx.
import crypto from 'node:crypto';
import fc from 'fast-check';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  check,
  hostileJson,
  oddIdText,
  oddString,
  encode,
  sendChecked,
  startHostile,
  type Hostile,
} from './harness.ts';
import { checkInvariants } from '../../helpers/invariants.ts';

let h: Hostile;
let genId: string;
let endpointId: string;
let png: Buffer;
beforeAll(async () => {
  h = await startHostile();
  const r = await sendChecked(
    h.svc.base,
    {
      method: 'POST',
      path: '/v1/generations',
      body: JSON.stringify({ modelId: 'rendergate/shot-list', inputs: { text: 'hello' } }),
      headers: {
        authorization: `Bearer ${h.key}`,
        'content-type': 'application/json',
        'idempotency-key': crypto.randomUUID(),
      },
    },
    [202],
  );
  genId = JSON.parse(r.text).id;
  const e = await sendChecked(
    h.svc.base,
    {
      method: 'POST',
      path: '/v1/webhook-endpoints',
      body: JSON.stringify({ url: 'https://hooks.example.com/x' }),
      headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
    },
    [201],
  );
  endpointId = JSON.parse(e.text).id;
  png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#f80' } })
    .png()
    .toBuffer();
});
afterAll(async () => {
  await h?.stop();
});

const pub = (extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${h.key}`,
  ...extra,
});

describe('odd ids', () => {
  const routes = [
    ['GET', (id: string) => `/v1/uploads/${id}`],
    ['DELETE', (id: string) => `/v1/uploads/${id}`],
    ['POST', (id: string) => `/v1/generations/${id}/cancel`],
    ['GET', (id: string) => `/v1/webhook-endpoints/${id}`],
    ['DELETE', (id: string) => `/v1/webhook-endpoints/${id}`],
    ['GET', (id: string) => `/v1/webhook-endpoints/${id}/deliveries`],
  ] as const;
  it('are 400 or 404 at every new id endpoint', async () => {
    await check(
      'new ids',
      fc.tuple(fc.constantFrom(...routes), oddIdText),
      async ([[method, path], id]) => {
        await sendChecked(h.svc.base, { method, path: path(id), headers: pub() }, [400, 404]);
      },
      200,
    );
  });
});

describe('bodies', () => {
  it('any JSON value at POST /v1/webhook-endpoints is 201, 400 or 409 (the limit), never a 5xx', async () => {
    const urlish = fc.oneof(
      fc.constantFrom(
        'https://hooks.example.com/a',
        'http://127.0.0.1:1/x',
        'ftp://x',
        'https://user:pw@x.example',
        'https://x.example/' + 'a'.repeat(2100),
      ),
      oddString(30),
    );
    const events = fc.oneof(
      fc.constant(undefined),
      hostileJson,
      fc.array(
        fc.constantFrom(
          'generation.started',
          'generation.succeeded',
          'generation.failed',
          'generation.refunded',
          'x',
          '',
        ),
      ),
    );
    const body = fc.oneof(
      hostileJson,
      fc.record({ url: fc.oneof(urlish, hostileJson), events }, { requiredKeys: [] }),
    );
    await check(
      'webhook bodies',
      body,
      async (v) => {
        await sendChecked(
          h.svc.base,
          {
            method: 'POST',
            path: '/v1/webhook-endpoints',
            headers: pub({ 'content-type': 'application/json' }),
            body: JSON.stringify(v) ?? 'null',
          },
          [201, 400, 409, 413],
        );
      },
      200,
    );
  });

  it('arbitrary bytes and content types at POST /v1/uploads are 201, 400, 413 or 415', async () => {
    const type = fc.oneof(
      fc.constantFrom(
        'image/png',
        'image/jpeg',
        'image/webp',
        'IMAGE/PNG',
        'image/png; charset=x',
        'image/gif',
        'image/svg+xml',
        'application/json',
        'text/plain',
        '',
      ),
      oddString(20),
    );
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b)),
      fc.nat(png.length).map((n) => png.subarray(0, n)),
      fc.constant(png),
      fc.constant(Buffer.concat([png, Buffer.alloc(100)])),
    );
    await check(
      'upload bodies',
      fc.tuple(type, bytes),
      async ([t, b]) => {
        const headers: Record<string, string> = pub();
        if (/^[\t\x20-\x7e]*$/.test(t) && t.trim() !== '') headers['content-type'] = t;
        await sendChecked(
          h.svc.base,
          { method: 'POST', path: '/v1/uploads', headers, body: b },
          [201, 400, 413, 415],
        );
      },
      200,
    );
  });
});

describe('headers and query strings', () => {
  it('junk Prefer headers on a read, a create and a cancel are answered as without them, or held briefly', async () => {
    const prefer = fc.oneof(
      fc.constantFrom(
        'wait=1',
        'wait=0',
        'wait=61',
        'wait=-1',
        'wait=1.5',
        'wait="1"',
        'WAIT=1',
        'wait = 1',
        'respond-async, wait=1',
        'wait=1; x',
        'wait=99999999999999999999',
        'wait',
        'wait=',
        ',,,',
        'return=minimal',
      ),
      oddString(30).map((s) => s.replace(/[^\t\x20-\x7e]/g, '')),
    );
    await check(
      'prefer',
      fc.tuple(fc.constantFrom('get', 'create', 'cancel'), prefer),
      async ([what, p]) => {
        const headers = pub({ prefer: p });
        if (what === 'get')
          await sendChecked(
            h.svc.base,
            { method: 'GET', path: `/v1/generations/${genId}`, headers },
            [200],
          );
        else if (what === 'cancel')
          await sendChecked(
            h.svc.base,
            { method: 'POST', path: `/v1/generations/gen_${'0'.repeat(32)}/cancel`, headers },
            [404],
          );
        else {
          const a = await sendChecked(
            h.svc.base,
            {
              method: 'POST',
              path: '/v1/generations',
              headers: {
                ...headers,
                'content-type': 'application/json',
                'idempotency-key': crypto.randomUUID(),
              },
              body: JSON.stringify({ modelId: 'rendergate/shot-list', inputs: { text: 'hi' } }),
            },
            [202],
          );
          const applied = a.headers['preference-applied'];
          if (applied !== undefined) expect(applied).toMatch(/^wait=([1-9]|[1-5]\d|60)$/);
        }
      },
      60,
    );
    await checkInvariants(h.dbh.db);
  });

  it('junk query strings on the new lists are 200 or 400 naming limit or cursor', async () => {
    const q = fc.oneof(
      fc.constantFrom(
        '?limit=0',
        '?limit=101',
        '?limit=x',
        '?cursor=x',
        '?cursor=',
        '?limit=5&limit=6',
        '?a=%ZZ',
        '',
      ),
      fc
        .tuple(fc.constantFrom('limit', 'cursor', 'x'), oddString(10))
        .map(([k, v]) => `?${k}=${encode(v)}`),
    );
    await check(
      'list queries',
      fc.tuple(
        fc.constantFrom(
          '/v1/webhook-endpoints',
          `/v1/webhook-endpoints/{e}/deliveries`,
          '/v1/uploads',
        ),
        q,
      ),
      async ([p, s]) => {
        const a = await sendChecked(
          h.svc.base,
          { method: 'GET', path: p.replace('{e}', endpointId) + s, headers: pub() },
          [200, 400],
        );
        if (a.status === 400 && JSON.parse(a.text).code === 'INVALID_INPUT') {
          for (const d of JSON.parse(a.text).details)
            expect(['limit', 'cursor']).toContain(d.field);
        }
      },
      100,
    );
  });
});
