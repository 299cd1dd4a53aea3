// Hostile path parameters and query strings (issue 5): ids and cursors that are not ids (traversal, NUL,
// quotes, SQL fragments, 10 KB, unicode, broken percent-encoding) at every id-taking endpoint, public and
// admin, through fetch and as raw bytes; junk query strings on every GET; odd methods on every route.
import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  check,
  encode,
  expectContract,
  forUrl,
  oddIdText,
  oddString,
  raw,
  request,
  send,
  sendChecked,
  startHostile,
  type Hostile,
} from './harness.ts';

const TEXT = 'rendergate/shot-list';
let h: Hostile;
let cursor: string; // a real cursor of the hostile account's generations
let ledgerCursor: string;
beforeAll(async () => {
  h = await startHostile();
  for (let i = 0; i < 3; i++) {
    await sendChecked(
      h.svc.base,
      {
        method: 'POST',
        path: '/v1/generations',
        body: JSON.stringify({ modelId: TEXT, inputs: { text: `hello ${i}` } }),
        headers: {
          authorization: `Bearer ${h.key}`,
          'content-type': 'application/json',
          'idempotency-key': crypto.randomUUID(),
        },
      },
      [202],
    );
  }
  cursor = JSON.parse(
    (
      await send(h.svc.base, {
        method: 'GET',
        path: '/v1/generations?limit=1',
        headers: { authorization: `Bearer ${h.key}` },
      })
    ).text,
  ).nextCursor;
  ledgerCursor = JSON.parse(
    (
      await send(h.svc.base, {
        method: 'GET',
        path: `/admin/v1/accounts/${h.accountId}/ledger?limit=1`,
        headers: { authorization: `Bearer ${ADMIN}` },
      })
    ).text,
  ).nextCursor;
  expect(cursor && ledgerCursor).toBeTruthy();
});
afterAll(async () => {
  await h?.stop();
});

const pub = () => ({ authorization: `Bearer ${h.key}` });
const adm = () => ({ authorization: `Bearer ${ADMIN}` });
const json = { 'content-type': 'application/json' };

interface IdRoute {
  name: string;
  method: string;
  path: (id: string) => string;
  headers: () => Record<string, string>;
  body?: string;
}
const ID_ROUTES: IdRoute[] = [
  { name: 'get generation', method: 'GET', path: (id) => `/v1/generations/${id}`, headers: pub },
  { name: 'content', method: 'GET', path: (id) => `/v1/generations/${id}/content`, headers: pub },
  {
    name: 'delete generation',
    method: 'DELETE',
    path: (id) => `/v1/generations/${id}`,
    headers: pub,
  },
  { name: 'admin account', method: 'GET', path: (id) => `/admin/v1/accounts/${id}`, headers: adm },
  {
    name: 'admin credits',
    method: 'POST',
    path: (id) => `/admin/v1/accounts/${id}/credits`,
    headers: () => ({ ...adm(), ...json }),
    body: '{"amountCents":1}',
  },
  {
    name: 'admin keys',
    method: 'POST',
    path: (id) => `/admin/v1/accounts/${id}/keys`,
    headers: () => ({ ...adm(), ...json }),
    body: '{}',
  },
  {
    name: 'admin ledger',
    method: 'GET',
    path: (id) => `/admin/v1/accounts/${id}/ledger`,
    headers: adm,
  },
  { name: 'admin revoke', method: 'DELETE', path: (id) => `/admin/v1/keys/${id}`, headers: adm },
  {
    name: 'admin refund',
    method: 'POST',
    path: (id) => `/admin/v1/generations/${id}/refund`,
    headers: adm,
  },
];

describe('odd ids in path parameters', () => {
  it('are 400 or 404 at every id endpoint (through fetch)', async () => {
    await check(
      'odd ids (fetch)',
      fc.tuple(fc.constantFrom(...ID_ROUTES), oddIdText),
      async ([r, id]) => {
        await sendChecked(
          h.svc.base,
          { method: r.method, path: r.path(id), headers: r.headers(), body: r.body },
          // 405: fetch resolves dot segments (`/accounts/./keys` → `/accounts/keys`), a path whose
          // route takes another method.
          [400, 404, 405],
        );
      },
      250,
    );
  });

  it('are 400 or 404 at every id endpoint (raw bytes in the request target: quotes, spaces, NUL, non-ASCII)', async () => {
    const rawId = fc.oneof(
      oddIdText,
      oddString(30).map((s) => Buffer.from(s, 'utf8').toString('latin1')),
      fc.constantFrom(
        "' OR 1=1--",
        '"x"',
        '<script>',
        'a b',
        'a\tb',
        '\u0000',
        '../../etc/passwd',
        '..\\..\\',
        'gen_\u00ff',
        '\u00e9\u00e8',
        '{}',
        '|',
        '`',
        '^',
      ),
    );
    await check(
      'odd ids (raw)',
      fc.tuple(fc.constantFrom(...ID_ROUTES), rawId),
      async ([r, id]) => {
        const target = r.path(id);
        const headers = Object.entries(r.headers());
        const a = await raw(h.port, request(r.method, target, headers, r.body));
        expect(a, `no answer to ${r.method} ${JSON.stringify(target)}`).not.toBeNull();
        expectContract(
          a!,
          forUrl(target, [400, 404]),
          target,
          `${r.method} ${JSON.stringify(target.slice(0, 200))}`,
        );
      },
      200,
    );
  });

  it('odd model ids at /v1/models/detail are 400 or 404', async () => {
    await check(
      'model ids',
      oddIdText,
      async (id) => {
        await sendChecked(
          h.svc.base,
          { method: 'GET', path: `/v1/models/detail?id=${id}`, headers: pub() },
          [400, 404],
        );
      },
      150,
    );
  });
});

// --- query strings ---------------------------------------------------------------------------------------

const paramName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('limit', 'cursor', 'status', 'modelId', 'id') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '__proto__',
      'constructor',
      'hasOwnProperty',
      'limit[]',
      'limit[0]',
      'cursor.x',
      'LIMIT',
      'a[b][c]',
      '',
      '%00',
      'toString',
    ),
  },
  { weight: 1, arbitrary: oddString(10).map(encode) },
);
const realish = () =>
  fc.constantFrom(
    '5',
    '1',
    '100',
    '0',
    '101',
    '-1',
    '1.0',
    '05',
    ' 5',
    '5 ',
    '+5',
    '0x5',
    '1e1',
    '99999',
    'queued',
    'succeeded',
    'refunded',
    'QUEUED',
    TEXT,
    encode(TEXT),
    'rendergate%2Fshot-list',
    cursor,
    `${cursor}=`,
    cursor.slice(1),
    `${cursor}A`,
    cursor.toUpperCase(),
    ledgerCursor,
    '',
  );
const paramValue = () =>
  fc.oneof(fc.constant(null), realish(), oddIdText, oddString(20).map(encode));
const queryString = () =>
  fc.oneof(
    fc
      .array(fc.tuple(paramName, paramValue()), { maxLength: 6 })
      .map((pairs) => '?' + pairs.map(([k, v]) => (v === null ? k : `${k}=${v}`)).join('&')),
    fc.constantFrom(
      '?',
      '??',
      '?&&&',
      '?=',
      '?==',
      '?limit',
      '?limit=',
      '?%',
      '?a=%ZZ',
      '?limit=5;cursor=x',
      '?limit=5#frag',
      '?limit=%35',
      '?limit=5&limit=6',
      '?status=queued&status=failed',
      '?cursor=&cursor=',
      '?' + 'a=1&'.repeat(2000),
      '?limit=' + '9'.repeat(5000),
      '?modelId=' + 'x'.repeat(6000),
    ),
  );

interface QueryRoute {
  name: string;
  path: () => string;
  headers: () => Record<string, string>;
  allowed: readonly number[];
}
const QUERY_ROUTES: QueryRoute[] = [
  { name: 'list', path: () => '/v1/generations', headers: pub, allowed: [200, 400] },
  {
    name: 'ledger',
    path: () => `/admin/v1/accounts/${h.accountId}/ledger`,
    headers: adm,
    allowed: [200, 400],
  },
  { name: 'model detail', path: () => '/v1/models/detail', headers: pub, allowed: [200, 400, 404] },
  { name: 'me', path: () => '/v1/me', headers: pub, allowed: [200] },
  { name: 'models', path: () => '/v1/models', headers: pub, allowed: [200] },
  {
    name: 'account',
    path: () => `/admin/v1/accounts/${h.accountId}`,
    headers: adm,
    allowed: [200],
  },
  {
    name: 'generation',
    path: () => '/v1/generations/gen_00000000000000000000000000000000',
    headers: pub,
    allowed: [404],
  },
  { name: 'healthz', path: () => '/healthz', headers: () => ({}), allowed: [200] },
  { name: 'readyz', path: () => '/readyz', headers: () => ({}), allowed: [200] },
  { name: 'metrics', path: () => '/metrics', headers: () => ({}), allowed: [200] },
];

/** Whether fetch sends this target as more than the 8 KiB the service takes (it percent-encodes some bytes). */
const longUrl = (target: string) => {
  const u = new URL(`http://x${target}`);
  return Buffer.byteLength(u.pathname + u.search) > 8 * 1024;
};

describe('junk query strings', () => {
  it('are answered inside the contract on every GET; a bad paging parameter is 400 INVALID_INPUT naming it', async () => {
    const NAMED = new Set(['limit', 'cursor', 'status', 'modelId', 'id']);
    await check(
      'query strings',
      fc.tuple(fc.constantFrom(...QUERY_ROUTES), queryString()),
      async ([r, q]) => {
        const a = await sendChecked(
          h.svc.base,
          { method: 'GET', path: r.path() + q, headers: r.headers() },
          r.allowed,
        );
        if (a.status === 400 && longUrl(r.path() + q))
          expect(JSON.parse(a.text).code).toBe('INVALID_REQUEST');
        else if (a.status === 400) {
          const e = JSON.parse(a.text);
          expect(e.code, a.text).toBe('INVALID_INPUT');
          for (const d of e.details) expect(NAMED.has(d.field), a.text).toBe(true);
        }
      },
      300,
    );
  });

  it('a cursor that the API did not return is 400 naming cursor; a real one pages', async () => {
    const mangled = fc.oneof(
      oddIdText,
      fc
        .tuple(fc.nat(40), fc.string({ minLength: 1, maxLength: 3 }))
        .map(([i, s]) => cursor.slice(0, i) + s + cursor.slice(i + 1)),
    );
    await check(
      'cursors',
      fc.tuple(fc.constantFrom('/v1/generations', `/admin/v1/accounts/{a}/ledger`), mangled),
      async ([p, c]) => {
        const isAdmin = p.startsWith('/admin');
        const target = `${p.replace('{a}', h.accountId)}?cursor=${encode(c)}`;
        const a = await sendChecked(
          h.svc.base,
          { method: 'GET', path: target, headers: isAdmin ? adm() : pub() },
          [200, 400],
        );
        if (a.status === 400 && longUrl(target))
          expect(JSON.parse(a.text).code).toBe('INVALID_REQUEST');
        else if (a.status === 400)
          expect(JSON.parse(a.text).details.map((d: { field: string }) => d.field)).toEqual([
            'cursor',
          ]);
        else if (a.status === 200) {
          // only a well-formed cursor (an id, base64url-encoded) pages
          const id = Buffer.from(c, 'base64url').toString('utf8');
          expect(
            /^[a-z]{2,4}_[0-9a-f]{32}$/.test(id) && Buffer.from(id).toString('base64url') === c,
            c,
          ).toBe(true);
        }
      },
      150,
    );
  });
});

// --- methods and unknown routes -----------------------------------------------------------------------------

describe('odd methods and unknown routes', () => {
  it('every method on every route, and junk routes, are answered inside the contract', async () => {
    const paths = [
      '/v1/me',
      '/v1/models',
      '/v1/models/detail?id=x',
      '/v1/quote',
      '/v1/generations',
      '/v1/generations/gen_00000000000000000000000000000000',
      '/v1/generations/gen_00000000000000000000000000000000/content',
      '/admin/v1/accounts',
      '/admin/v1/accounts/{a}',
      '/admin/v1/accounts/{a}/credits',
      '/admin/v1/accounts/{a}/keys',
      '/admin/v1/keys/key_00000000000000000000000000000000',
      '/admin/v1/accounts/{a}/ledger',
      '/admin/v1/generations/gen_00000000000000000000000000000000/refund',
      '/healthz',
      '/readyz',
      '/metrics',
      '/',
      '/v1',
      '/v1/',
      '/admin',
      '/admin/v1',
      '/v1/uploads',
      '/v1/uploads/upl_00000000000000000000000000000000',
      '/v1/generations/gen_00000000000000000000000000000000/cancel',
      '/v1/webhook-endpoints',
      '/v1/webhook-endpoints/whe_00000000000000000000000000000000',
      '/v1/webhook-endpoints/whe_00000000000000000000000000000000/deliveries',
      '//v1/me',
      '/v1//me',
      '/v1/me/',
      '/V1/ME',
      '/v1/me%00',
      '/v1/./me',
      '/v1/%2e%2e/healthz',
      '/v2/me',
      '/v1/generations/',
      '/admin/v1/accounts/',
      '/v1/me;x',
    ];
    const methods = [
      'GET',
      'POST',
      'PUT',
      'PATCH',
      'DELETE',
      'OPTIONS',
      'HEAD',
      'PROPFIND',
      'SEARCH',
      'TRACE',
    ];
    await check(
      'methods',
      fc.tuple(fc.constantFrom(...methods), fc.constantFrom(...paths), fc.boolean(), fc.boolean()),
      async ([method, p, admin, withBody]) => {
        const path = p.replace('{a}', h.accountId);
        const headers: Array<[string, string]> = [
          ['Authorization', `Bearer ${admin ? ADMIN : h.key}`],
          ['Idempotency-Key', crypto.randomUUID()],
        ];
        const body =
          withBody && method !== 'GET' && method !== 'HEAD' && method !== 'TRACE'
            ? JSON.stringify({
                modelId: TEXT,
                inputs: { text: 'a' },
                email: `m-${crypto.randomUUID()}@x.test`,
                amountCents: 1,
              })
            : undefined;
        if (body) headers.push(['Content-Type', 'application/json']);
        const a = await raw(h.port, request(method, path, headers, body));
        expect(a, `${method} ${path}`).not.toBeNull();
        if (method === 'HEAD') {
          expect(a!.status).toBeLessThan(500);
          return;
        }
        // `/` and `/admin` are the studio's pages (HTML for people): a page, or the way to its sign-in.
        if (method === 'GET' && (path === '/' || path === '/admin')) {
          expect([200, 303], `${method} ${path}`).toContain(a!.status);
          return;
        }
        // Whatever the route: a success, one of the contract's refusals, 404 for an unknown path, 405
        // for a method a known path does not take (OPTIONS on it: 204 with Allow).
        if (method === 'OPTIONS' && a!.status === 204) {
          expect(a!.headers.allow, `${method} ${path}`).toMatch(/OPTIONS/);
          return;
        }
        expectContract(
          a!,
          [200, 201, 202, 400, 401, 402, 404, 405, 409, 415],
          `${path}\n${body ?? ''}`,
          `${method} ${path}`,
        );
      },
      200,
    );
  });
});
