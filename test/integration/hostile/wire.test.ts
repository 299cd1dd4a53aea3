// Hostile HTTP on the wire (issue 5), over raw sockets where fetch refuses: junk Content-Type values,
// junk and oversized headers, duplicate Authorization, non-ASCII bytes, bad Content-Length,
// Transfer-Encoding tricks, oversized URLs, and junk Range/validator headers on a real file download.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  STATUS,
  check,
  expectContract,
  oddString,
  raw,
  record,
  request,
  startHostile,
  type Hostile,
  type RawAnswer,
} from './harness.ts';

const TEXT = 'rendergate/shot-list';
const QUOTE_BODY = JSON.stringify({ modelId: TEXT, inputs: { text: 'hello' } });
let h: Hostile;
let fileGen: { id: string; etag: string; bytes: number };
beforeAll(async () => {
  h = await startHostile();
  // A succeeded file render without rendering: a queued generation given a stored file, as the worker would.
  const r = await raw(
    h.port,
    request(
      'POST',
      '/v1/generations',
      [
        ['Authorization', `Bearer ${h.key}`],
        ['Content-Type', 'application/json'],
        ['Idempotency-Key', crypto.randomUUID()],
      ],
      QUOTE_BODY,
    ),
  );
  const id = JSON.parse(r!.text).id as string;
  const tmp = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rg-hostile-')), 'out.mp4');
  fs.writeFileSync(tmp, crypto.randomBytes(4096));
  const stored = await h.svc.running.infra.storage.put(`${id}.mp4`, tmp, 'video/mp4');
  await h.dbh.db.query(
    `UPDATE generations SET status = 'succeeded', content_key = $2, content_type = 'video/mp4', content_bytes = $3, content_etag = $4,
    started_at = now(), completed_at = now() WHERE id = $1`,
    [id, `${id}.mp4`, stored.bytes, stored.etag],
  );
  fileGen = { id, etag: stored.etag, bytes: stored.bytes };
});
afterAll(async () => {
  await h?.stop();
});

interface Route {
  name: string;
  method: string;
  target: () => string;
  admin?: boolean;
  body?: string;
  idem?: boolean;
  allowed: readonly number[];
}
const ROUTES: Route[] = [
  { name: 'me', method: 'GET', target: () => '/v1/me', allowed: STATUS.me },
  { name: 'models', method: 'GET', target: () => '/v1/models', allowed: STATUS.models },
  {
    name: 'detail',
    method: 'GET',
    target: () => `/v1/models/detail?id=${TEXT}`,
    allowed: STATUS.modelDetail,
  },
  {
    name: 'quote',
    method: 'POST',
    target: () => '/v1/quote',
    body: QUOTE_BODY,
    allowed: STATUS.quote,
  },
  {
    name: 'create',
    method: 'POST',
    target: () => '/v1/generations',
    body: QUOTE_BODY,
    idem: true,
    allowed: STATUS.create,
  },
  { name: 'list', method: 'GET', target: () => '/v1/generations?limit=2', allowed: STATUS.list },
  {
    name: 'get',
    method: 'GET',
    target: () => `/v1/generations/${fileGen.id}`,
    allowed: STATUS.get,
  },
  {
    name: 'content',
    method: 'GET',
    target: () => `/v1/generations/${fileGen.id}/content`,
    allowed: STATUS.content,
  },
  {
    name: 'delete',
    method: 'DELETE',
    target: () => '/v1/generations/gen_00000000000000000000000000000000',
    allowed: STATUS.del,
  },
  {
    name: 'admin accounts',
    method: 'POST',
    target: () => '/admin/v1/accounts',
    admin: true,
    body: '{"email":"EMAIL"}',
    allowed: STATUS.adminCreateAccount,
  },
  {
    name: 'admin account',
    method: 'GET',
    target: () => `/admin/v1/accounts/${h.accountId}`,
    admin: true,
    allowed: STATUS.adminGetAccount,
  },
  {
    name: 'admin credits',
    method: 'POST',
    target: () => `/admin/v1/accounts/${h.accountId}/credits`,
    admin: true,
    body: '{"amountCents":1}',
    allowed: STATUS.adminCredits,
  },
  {
    name: 'admin keys',
    method: 'POST',
    target: () => `/admin/v1/accounts/${h.accountId}/keys`,
    admin: true,
    body: '{"rateLimitPerMinute":5}',
    allowed: STATUS.adminKeys,
  },
  {
    name: 'admin revoke',
    method: 'DELETE',
    target: () => '/admin/v1/keys/key_00000000000000000000000000000000',
    admin: true,
    allowed: STATUS.adminRevoke,
  },
  {
    name: 'admin ledger',
    method: 'GET',
    target: () => `/admin/v1/accounts/${h.accountId}/ledger`,
    admin: true,
    allowed: STATUS.adminLedger,
  },
  {
    name: 'admin refund',
    method: 'POST',
    target: () => '/admin/v1/generations/gen_00000000000000000000000000000000/refund',
    admin: true,
    allowed: STATUS.adminRefund,
  },
  { name: 'healthz', method: 'GET', target: () => '/healthz', allowed: STATUS.healthz },
  { name: 'readyz', method: 'GET', target: () => '/readyz', allowed: STATUS.readyz },
  { name: 'metrics', method: 'GET', target: () => '/metrics', allowed: STATUS.metrics },
];
const bodyOf = (r: Route) => r.body?.replace('EMAIL', `w-${crypto.randomUUID()}@example.test`);
const auth = (r: Route): [string, string] => ['Authorization', `Bearer ${r.admin ? ADMIN : h.key}`];
const baseHeaders = (r: Route): Array<[string, string]> => [
  auth(r),
  ...(r.idem ? [['Idempotency-Key', crypto.randomUUID()] as [string, string]] : []),
];

function expectAnswer(
  a: RawAnswer | null,
  allowed: readonly number[],
  sent: string,
  what: string,
  mayHang = false,
): void {
  if (a === null) {
    record('none');
    expect(mayHang, `no answer: ${what}`).toBe(true);
    return;
  }
  expectContract(a, allowed, sent, what);
}

// Any request may also meet the HTTP layer's own refusals: 400 malformed, 431 headers too large.
const withHttp = (allowed: readonly number[]) => [...allowed, 400, 431];
const latin1 = (s: string) => Buffer.from(s, 'latin1');
const bytes = fc.uint8Array({ minLength: 1, maxLength: 30 }).map((b) => Buffer.from(b));

describe('Content-Type', () => {
  it('junk values, charsets and parameters at every body endpoint are 415, 400 or a normal answer', async () => {
    const contentType = fc.oneof(
      fc.constantFrom(
        'application/json',
        'APPLICATION/JSON',
        'Application/Json; Charset=UTF-8',
        'application/json; charset=utf-16',
        'application/json;charset=latin1',
        'application/json; charset="utf-8"',
        'application/json ; charset=utf-8',
        'application/json; charset=utf-8; charset=ascii',
        'application/json;',
        'application/json;;',
        'application/json; =',
        'application/json; a',
        'application/json; boundary=x',
        'application/jsonx',
        'application/json+x',
        'application/json, text/plain',
        'text/json',
        'text/plain',
        'text/plain; charset=utf-8',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/octet-stream',
        '',
        ' ',
        ';',
        '/',
        'application/',
        '/json',
        '*/*',
        'application/*',
        'json',
        'application/vnd.api+json',
        'application/problem+json',
        'application/json\u00ff',
        'application/json; charset=\u00e9',
        `application/json; x=${'y'.repeat(8000)}`,
      ),
      oddString(30).map((s) =>
        Buffer.from(s, 'utf8')
          .toString('latin1')
          .replace(/[\r\n]/g, ''),
      ),
      bytes.map((b) => b.toString('latin1').replace(/[\r\n]/g, '')),
    );
    const bodyRoutes = ROUTES.filter((r) => r.method !== 'GET');
    await check(
      'content-type',
      fc.tuple(fc.constantFrom(...bodyRoutes), contentType, fc.boolean()),
      async ([r, ct, dup]) => {
        const body = bodyOf(r) ?? '{}';
        const headers: Array<[string, string]> = [...baseHeaders(r), ['Content-Type', ct]];
        if (dup) headers.push(['Content-Type', 'application/json']);
        const a = await raw(h.port, request(r.method, r.target(), headers, body));
        expectAnswer(
          a,
          withHttp(r.allowed),
          `${ct}\n${body}`,
          `${r.method} ${r.target()} content-type ${JSON.stringify(ct).slice(0, 200)}`,
        );
      },
      250,
    );
  });
});

describe('junk headers', () => {
  const name = fc.oneof(
    fc.constantFrom(
      'Authorization',
      'authorization',
      'X-Request-Id',
      'Idempotency-Key',
      'Accept',
      'Accept-Encoding',
      'Accept-Charset',
      'Range',
      'If-None-Match',
      'If-Range',
      'If-Modified-Since',
      'Cookie',
      'Host',
      'Expect',
      'Connection',
      'Upgrade',
      'X-Forwarded-For',
      'X-Forwarded-Proto',
      'Forwarded',
      'Origin',
      'Content-Encoding',
      'Content-Language',
      'Trailer',
      'TE',
      'Via',
      'Max-Forwards',
      'Proxy-Authorization',
      'X-HTTP-Method-Override',
      'Referer',
      'User-Agent',
    ),
    fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,40}$/),
  );
  const value = fc.oneof(
    fc.constantFrom(
      '',
      ' ',
      'Bearer',
      'Bearer ',
      'Bearer  x',
      'bearer rg_live_',
      'Basic Zm9vOmJhcg==',
      'Bearer rg_live_' + '1'.repeat(64),
      'Bearer rg_live_' + '1'.repeat(65),
      'Bearer rg_live_0OIl' + 'a'.repeat(40),
      'Bearer\trg_live_x',
      `Bearer ${ADMIN}`,
      'gzip, br, deflate',
      'bytes=0-',
      'bytes=-1',
      'bytes=0-0,1-1',
      'bytes=99999999999999999999-',
      '*',
      'W/"x"',
      '100-continue',
      'upgrade',
      'websocket',
      'h2c',
      'close, keep-alive',
      'chunked',
      'null',
      '\u00ff\u00fe',
      '\u00e9t\u00e9',
      'x'.repeat(4000),
    ),
    oddString(40).map((s) =>
      Buffer.from(s, 'utf8')
        .toString('latin1')
        .replace(/[\r\n]/g, ''),
    ),
    bytes.map((b) => b.toString('latin1')),
    fc.integer({ min: 1, max: 20 }).map((n) => 'v'.repeat(n * 1000)),
  );
  it('random, duplicated, oversized and non-ASCII headers at every endpoint are answered inside the contract', async () => {
    const hdrs = fc.array(fc.tuple(name, value), { minLength: 1, maxLength: 6 });
    await check(
      'headers',
      fc.tuple(fc.constantFrom(...ROUTES), hdrs, fc.boolean()),
      async ([r, extra, authFirst]) => {
        const headers: Array<[string, string | Buffer]> = authFirst
          ? [...baseHeaders(r), ...extra.map(([k, v]) => [k, latin1(v)] as [string, Buffer])]
          : [...extra.map(([k, v]) => [k, latin1(v)] as [string, Buffer]), ...baseHeaders(r)];
        const body = bodyOf(r);
        if (body) headers.push(['Content-Type', 'application/json']);
        const a = await raw(h.port, request(r.method, r.target(), headers, body));
        const sent = extra.map(([k, v]) => `${k}: ${v}`).join('\n');
        expectAnswer(
          a,
          withHttp([...r.allowed, 200]),
          sent,
          `${r.method} ${r.target()} with ${JSON.stringify(extra).slice(0, 300)}`,
        );
      },
      250,
    );
  });

  it('duplicate Authorization headers never let the second one in', async () => {
    const other = await h.api.account(0);
    const me = (headers: Array<[string, string]>) => raw(h.port, request('GET', '/v1/me', headers));
    const a = await me([
      ['Authorization', `Bearer ${h.key}`],
      ['Authorization', `Bearer ${other.key}`],
    ]);
    expectContract(a!, [200, 400, 401], '', 'duplicate authorization');
    if (a!.status === 200) expect(JSON.parse(a!.text).accountId).toBe(h.accountId); // Node keeps the first
    const b = await me([
      ['Authorization', 'Bearer nope'],
      ['Authorization', `Bearer ${h.key}`],
    ]);
    expectContract(b!, [400, 401], '', 'duplicate authorization, bad first');
    const c = await raw(
      h.port,
      request('GET', `/admin/v1/accounts/${h.accountId}`, [
        ['Authorization', `Bearer ${h.key}`],
        ['Authorization', `Bearer ${ADMIN}`],
      ]),
    );
    expectContract(c!, [400, 401], '', 'admin token second');
  });

  it('headers over 16 KiB get a clean 431 with the error body; just under the limit is served', async () => {
    const under = await raw(
      h.port,
      request('GET', '/v1/me', [
        ['Authorization', `Bearer ${h.key}`],
        ['X-Pad', 'p'.repeat(15_000)],
      ]),
    );
    expectContract(under!, [200], '', 'headers just under 16 KiB');
    for (const n of [17_000, 40_000, 200_000]) {
      const over = await raw(
        h.port,
        request('GET', '/v1/me', [
          ['Authorization', `Bearer ${h.key}`],
          ['X-Pad', 'p'.repeat(n)],
        ]),
      );
      expectContract(over!, [431], '', `headers of ${n} bytes`);
    }
    const many = await raw(
      h.port,
      request(
        'GET',
        '/v1/me',
        Array.from({ length: 2000 }, (_, i) => [`X-H${i}`, 'v'] as [string, string]),
      ),
    );
    // Node's count of many small headers is approximate: such a request may be served (and has no key here).
    expectContract(many!, [431, 400, 401], '', '2000 headers');
  });

  it('a URL over 8 KiB is 400 INVALID_REQUEST, before the key is checked; over the header limit it is 431', async () => {
    const url = (n: number) => `/v1/generations?cursor=${'c'.repeat(n)}`;
    const ok = await raw(h.port, request('GET', url(7000), [['Authorization', `Bearer ${h.key}`]]));
    expectContract(ok!, [400], url(7000), 'URL of 7 KB');
    for (const [n, status] of [
      [9000, 400],
      [16_000, 400],
      [20_000, 431],
    ] as const) {
      const a = await raw(h.port, request('GET', url(n), [['Authorization', `Bearer ${h.key}`]]));
      expectContract(a!, [status], url(n), `URL of ${n} bytes`);
      if (status === 400) expect(JSON.parse(a!.text).code).toBe('INVALID_REQUEST');
    }
    for (const target of [
      `/nowhere/${'x'.repeat(10_000)}`,
      `/v1/generations/${'x'.repeat(9000)}`,
      `/admin/v1/keys/${'x'.repeat(9000)}`,
    ]) {
      const a = await raw(h.port, request('DELETE', target, []));
      expectContract(a!, [400], '', 'long URL without a key');
      expect(JSON.parse(a!.text).code).toBe('INVALID_REQUEST');
    }
    // Under the URL limit, a long id reaches its route like any other: authenticated, then the route's 404.
    const longId = await raw(h.port, request('GET', `/v1/generations/gen_${'0'.repeat(5000)}`, []));
    expect(JSON.parse(longId!.text).code).toBe('API_KEY_MISSING');
    const longIdKey = await raw(
      h.port,
      request('GET', `/v1/generations/gen_${'0'.repeat(5000)}`, [
        ['Authorization', `Bearer ${h.key}`],
      ]),
    );
    expect(JSON.parse(longIdKey!.text).code).toBe('GENERATION_NOT_FOUND');
  });
});

describe('framing: Content-Length and Transfer-Encoding', () => {
  type Framing = {
    name: string;
    headers: Array<[string, string]>;
    body: string;
    mayHang?: boolean;
  };
  const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
  const B = QUOTE_BODY;
  const n = Buffer.byteLength(B);
  const framings: Framing[] = [
    {
      name: 'chunked',
      headers: [['Transfer-Encoding', 'chunked']],
      body: chunk(B.slice(0, 10)) + chunk(B.slice(10)) + '0\r\n\r\n',
    },
    {
      name: 'chunked with extensions and trailers',
      headers: [['Transfer-Encoding', 'chunked']],
      body: `${n.toString(16)};ext=1\r\n${B}\r\n0\r\nX-T: 1\r\n\r\n`,
    },
    {
      name: 'chunked bad size',
      headers: [['Transfer-Encoding', 'chunked']],
      body: `zz\r\n${B}\r\n0\r\n\r\n`,
    },
    {
      name: 'chunked size too big',
      headers: [['Transfer-Encoding', 'chunked']],
      body: `ffffffffffffffffff\r\n${B}\r\n0\r\n\r\n`,
    },
    {
      name: 'chunked negative',
      headers: [['Transfer-Encoding', 'chunked']],
      body: `-5\r\n${B}\r\n0\r\n\r\n`,
    },
    {
      name: 'chunked without last chunk',
      headers: [['Transfer-Encoding', 'chunked']],
      body: chunk(B),
      mayHang: true,
    },
    {
      name: 'chunked, LF only',
      headers: [['Transfer-Encoding', 'chunked']],
      body: `${n.toString(16)}\n${B}\n0\n\n`,
      mayHang: true,
    },
    {
      name: 'chunked over the body limit',
      headers: [['Transfer-Encoding', 'chunked']],
      body: chunk('['.repeat(600_000)) + chunk(']'.repeat(600_000)) + '0\r\n\r\n',
    },
    { name: 'CHUNKED', headers: [['Transfer-Encoding', 'CHUNKED']], body: chunk(B) + '0\r\n\r\n' },
    {
      name: 'gzip, chunked',
      headers: [['Transfer-Encoding', 'gzip, chunked']],
      body: chunk(B) + '0\r\n\r\n',
    },
    {
      name: 'chunked, gzip',
      headers: [['Transfer-Encoding', 'chunked, gzip']],
      body: chunk(B) + '0\r\n\r\n',
      mayHang: true,
    },
    {
      name: 'chunked, chunked',
      headers: [['Transfer-Encoding', 'chunked, chunked']],
      body: chunk(B) + '0\r\n\r\n',
      mayHang: true,
    },
    {
      name: 'two TE headers',
      headers: [
        ['Transfer-Encoding', 'chunked'],
        ['Transfer-Encoding', 'identity'],
      ],
      body: chunk(B) + '0\r\n\r\n',
      mayHang: true,
    },
    { name: 'identity', headers: [['Transfer-Encoding', 'identity']], body: B, mayHang: true },
    { name: 'xchunked', headers: [['Transfer-Encoding', 'xchunked']], body: B, mayHang: true },
    {
      name: 'TE with space',
      headers: [['Transfer-Encoding', ' chunked ']],
      body: chunk(B) + '0\r\n\r\n',
    },
    {
      name: 'TE tab obs-fold',
      headers: [['Transfer-Encoding', 'chunked\r\n\tx']],
      body: chunk(B) + '0\r\n\r\n',
      mayHang: true,
    },
    {
      name: 'TE and CL',
      headers: [
        ['Transfer-Encoding', 'chunked'],
        ['Content-Length', String(n)],
      ],
      body: chunk(B) + '0\r\n\r\n',
    },
    {
      name: 'CL and TE',
      headers: [
        ['Content-Length', '4'],
        ['Transfer-Encoding', 'chunked'],
      ],
      body: chunk(B) + '0\r\n\r\n',
    },
    { name: 'CL letters', headers: [['Content-Length', 'abc']], body: B },
    { name: 'CL negative', headers: [['Content-Length', '-1']], body: B },
    { name: 'CL plus', headers: [['Content-Length', `+${n}`]], body: B },
    { name: 'CL hex', headers: [['Content-Length', '0x10']], body: B },
    { name: 'CL exponent', headers: [['Content-Length', '1e3']], body: B, mayHang: true },
    { name: 'CL float', headers: [['Content-Length', `${n}.0`]], body: B },
    { name: 'CL list same', headers: [['Content-Length', `${n}, ${n}`]], body: B },
    { name: 'CL list different', headers: [['Content-Length', `${n}, 5`]], body: B },
    {
      name: 'two CL same',
      headers: [
        ['Content-Length', String(n)],
        ['Content-Length', String(n)],
      ],
      body: B,
    },
    {
      name: 'two CL different',
      headers: [
        ['Content-Length', String(n)],
        ['Content-Length', '5'],
      ],
      body: B,
    },
    {
      name: 'CL huge',
      headers: [['Content-Length', '99999999999999999999']],
      body: B,
      mayHang: true,
    },
    {
      name: 'CL over limit',
      headers: [['Content-Length', String(2 * 1024 * 1024)]],
      body: B,
      mayHang: true,
    },
    { name: 'CL empty', headers: [['Content-Length', '']], body: B },
    { name: 'CL space', headers: [['Content-Length', ` ${n} `]], body: B },
    { name: 'CL smaller than body', headers: [['Content-Length', '5']], body: B },
    { name: 'CL zero with body', headers: [['Content-Length', '0']], body: B },
    {
      name: 'CL larger than body',
      headers: [['Content-Length', String(n + 50)]],
      body: B,
      mayHang: true,
    },
    { name: 'no framing with body', headers: [['X-None', '1']], body: B },
    { name: 'CL with NUL', headers: [['Content-Length', `${n}\u0000`]], body: B },
    {
      name: 'header without colon',
      headers: [
        ['Content-Length', String(n)],
        ['Broken header line', ''],
      ],
      body: B,
    },
    { name: 'LF-only line ends', headers: [['Content-Length', `${n}\nX-A: 1`]], body: B },
    { name: 'bare CR', headers: [['Content-Length', `${n}\rX-A: 1`]], body: B },
    {
      name: 'space before colon',
      headers: [['Content-Length ', String(n)]],
      body: B,
      mayHang: true,
    },
    {
      name: 'Expect 100-continue',
      headers: [
        ['Content-Length', String(n)],
        ['Expect', '100-continue'],
      ],
      body: B,
    },
    {
      name: 'Expect junk',
      headers: [
        ['Content-Length', String(n)],
        ['Expect', 'x-junk'],
      ],
      body: B,
    },
  ];
  it('every framing trick at every body endpoint is answered inside the contract, or the unfinished request gets no answer', async () => {
    const bodyRoutes = ROUTES.filter((r) => r.method !== 'GET');
    const cases = fc.tuple(
      fc.constantFrom(...bodyRoutes),
      fc.constantFrom(...framings),
      fc.boolean(),
    );
    await check(
      'framing',
      cases,
      async ([r, f, ct]) => {
        const headers: Array<[string, string]> = [
          ...baseHeaders(r),
          ...(ct ? [['Content-Type', 'application/json'] as [string, string]] : []),
          ...f.headers,
        ];
        const a = await raw(
          h.port,
          request(r.method, r.target(), headers, f.body),
          f.mayHang ? 600 : 5000,
        );
        expectAnswer(
          a,
          withHttp([...r.allowed, 408]),
          f.body,
          `${r.method} ${r.target()} framing "${f.name}"`,
          f.mayHang,
        );
      },
      200,
    );
  });
});

describe('request lines', () => {
  it('odd methods, targets and versions are answered inside the contract', async () => {
    const line = fc.oneof(
      fc.constantFrom(
        'GET /v1/me HTTP/1.0',
        'GET /v1/me HTTP/0.9',
        'GET /v1/me HTTP/2.0',
        'GET /v1/me HTTP/1.1 x',
        'GET  /v1/me HTTP/1.1',
        'GET /v1/me  HTTP/1.1',
        'get /v1/me HTTP/1.1',
        'FOO /v1/me HTTP/1.1',
        'CONNECT 127.0.0.1:80 HTTP/1.1',
        'GET * HTTP/1.1',
        'OPTIONS * HTTP/1.1',
        'GET http://127.0.0.1/v1/me HTTP/1.1',
        'GET v1/me HTTP/1.1',
        'GET /v1/me\u0000 HTTP/1.1',
        'GET /v1/m\u00e9 HTTP/1.1',
        'GET /v1/me?x=\u00ff HTTP/1.1',
        'GET /v1/me#x HTTP/1.1',
        'GET /%zz HTTP/1.1',
        'GET /v1/generations/%ED%A0%80 HTTP/1.1',
        'GET /v1/generations?cursor=%ED%A0%80 HTTP/1.1',
        'GET HTTP/1.1',
        'GET',
        '',
        ' GET /v1/me HTTP/1.1',
        'PRI * HTTP/2.0',
      ),
      fc
        .tuple(fc.constantFrom('GET', 'POST', 'DELETE'), bytes)
        .map(([m, b]) => `${m} /v1/${b.toString('latin1').replace(/[\r\n]/g, '')} HTTP/1.1`),
    );
    await check(
      'request lines',
      line,
      async (l) => {
        const a = await raw(
          h.port,
          Buffer.concat([
            latin1(
              `${l}\r\nHost: x\r\nAuthorization: Bearer ${h.key}\r\nConnection: close\r\n\r\n`,
            ),
          ]),
        );
        expectAnswer(
          a,
          [200, 400, 401, 404, 505],
          l,
          `request line ${JSON.stringify(l)}`, // Node closes a CONNECT (no proxy here) and an HTTP/2 preface without a word.
          l.startsWith('PRI') || l.startsWith('CONNECT') || l === '' || l.endsWith('HTTP/0.9'),
        );
      },
      80,
    );
  });
});

describe('file download headers', () => {
  it('junk Range, If-Range and If-None-Match give 200, 206 or 304 with the right bytes', async () => {
    const range = fc.oneof(
      fc.constantFrom(
        'bytes=0-0',
        'bytes=0-',
        'bytes=-1',
        'bytes=-0',
        'bytes=4095-',
        'bytes=4096-',
        'bytes=5000-6000',
        'bytes=10-5',
        'bytes=0-1,2-3',
        'bytes=',
        'bytes=-',
        'bytes=--1',
        'bytes=1-2-3',
        'bytes=99999999999999999999-',
        'bytes=0-99999999999999999999',
        'bytes=1e3-',
        'bytes=0x10-',
        'items=0-1',
        'BYTES=0-1',
        'bytes = 0-1',
        ' bytes=0-1',
        'bytes=\u00ff-',
        '',
        'bytes=0-1\u0000',
      ),
      fc
        .tuple(fc.integer({ min: -10, max: 5000 }), fc.integer({ min: -10, max: 5000 }))
        .map(([a, b]) => `bytes=${a}-${b}`),
    );
    const validator = fc.oneof(
      fc.constant<string | undefined>(undefined),
      fc.constantFrom('*', '"x"', 'W/"x"', '', ',', '""'),
      fc.constant('ETAG'),
      oddString(20).map((s) =>
        Buffer.from(s)
          .toString('latin1')
          .replace(/[\r\n]/g, ''),
      ),
    );
    await check(
      'range',
      fc.tuple(range, validator, validator),
      async ([rg, ifRange, inm]) => {
        const headers: Array<[string, string]> = [
          ['Authorization', `Bearer ${h.key}`],
          ['Range', rg],
        ];
        if (ifRange !== undefined)
          headers.push(['If-Range', ifRange === 'ETAG' ? fileGen.etag : ifRange]);
        if (inm !== undefined) headers.push(['If-None-Match', inm === 'ETAG' ? fileGen.etag : inm]);
        const a = await raw(
          h.port,
          request('GET', `/v1/generations/${fileGen.id}/content`, headers),
        );
        expectAnswer(
          a,
          [200, 206, 304, 400, 416],
          `${rg}\n${ifRange}\n${inm}`,
          `content with Range ${JSON.stringify(rg)} If-Range ${ifRange} If-None-Match ${inm}`,
        );
        if (a!.status === 200) expect(Number(a!.headers['content-length'])).toBe(fileGen.bytes);
        if (a!.status === 206) {
          const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(a!.headers['content-range']);
          expect(m, a!.headers['content-range']).not.toBeNull();
          expect(Number(a!.headers['content-length'])).toBe(Number(m![2]) - Number(m![1]) + 1);
        }
      },
      150,
    );
  });
});
