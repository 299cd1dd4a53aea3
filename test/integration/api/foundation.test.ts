// Keys, authentication, the error model and the operator API against the real service and database.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../../src/db/pool.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { emptyDatabase, freshDatabase } from '../../helpers/db.ts';
import { ADMIN, client, startTestService, type TestService } from '../../helpers/service.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { awayFromMinuteEdge } from '../../helpers/minute.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let api: ReturnType<typeof client>;
const logLines: string[] = [];

beforeAll(async () => {
  dbh = await freshDatabase();
  const sink = new Writable({
    write(chunk, _e, cb) {
      logLines.push(chunk.toString());
      cb();
    },
  });
  svc = await startTestService(dbh.url, { logger: pino({ level: 'info' }, sink) });
  api = client(svc.base);
});
afterAll(async () => {
  await svc?.stop();
  await dbh?.drop();
});

describe('keys', () => {
  it('are rg_live_ + base58 from a CSPRNG, stored only as a SHA-256 hash, never logged', async () => {
    const a = await api.account(500);
    expect(a.key).toMatch(/^rg_live_[1-9A-HJ-NP-Za-km-z]{32,}$/);
    const me = await api.call('GET', '/v1/me', { key: a.key });
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({
      accountId: a.accountId,
      balanceCents: 500,
      currency: 'EUR',
      key: { id: a.keyId, spentTodayCents: 0, dailyCapCents: null, rateLimitPerMinute: 600 },
    });
    expect(a.key.startsWith(me.json.key.start)).toBe(true);
    const rows = (
      await dbh.db.query(
        'SELECT row_to_json(k)::text AS j, key_hash FROM api_keys k WHERE id = $1',
        [a.keyId],
      )
    ).rows;
    expect(rows[0].j).not.toContain(a.key.slice(8));
    expect(rows[0].key_hash).toEqual(
      (await import('node:crypto')).createHash('sha256').update(a.key).digest(),
    );
    const other = await api.account(0);
    expect(other.key).not.toBe(a.key);
    expect(logLines.join('')).not.toContain(a.key.slice(8));
    expect(logLines.join('')).not.toContain(ADMIN);
  });

  it('answer 401 with the contract codes, and a revocation takes effect within a second', async () => {
    const a = await api.account(0);
    const code = async (headers: Record<string, string>) =>
      (await api.call('GET', '/v1/me', { headers })).json.code;
    expect(await code({})).toBe('API_KEY_MISSING');
    expect(await code({ authorization: 'Basic abc' })).toBe('API_KEY_INVALID');
    expect(await code({ authorization: 'Bearer rg_live_' + '1'.repeat(40) })).toBe(
      'API_KEY_INVALID',
    );
    expect(await code({ authorization: `Bearer ${ADMIN}` })).toBe('API_KEY_INVALID');
    expect(await code({ authorization: `Bearer ${a.key}x` })).toBe('API_KEY_INVALID');
    expect((await api.call('GET', '/v1/me', { key: a.key })).status).toBe(200);
    await api.admin('DELETE', `/keys/${a.keyId}`);
    // The contract: revoked on every node within 1 s. A request sent once that second has passed is
    // refused, however slowly the machine answers it (a lower bound on waiting, not an upper one on speed).
    await new Promise((r) => setTimeout(r, 1_000));
    const r = await api.call('GET', '/v1/me', { key: a.key });
    expect(r.json.code).toBe('API_KEY_REVOKED');
    expect(r.headers.get('ratelimit')).toBeNull();
  });
});

describe('errors', () => {
  it('follow the contract body, with request ids', async () => {
    const a = await api.account(0);
    const bad = await api.call('POST', '/v1/quote', { key: a.key, body: '{"x":' });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({
      code: 'INVALID_REQUEST',
      requestId: bad.headers.get('x-request-id'),
    });
    expect((await api.call('POST', '/v1/quote', { key: a.key, body: '[1,2]' })).json.code).toBe(
      'INVALID_REQUEST',
    );
    expect((await api.call('POST', '/v1/quote', { key: a.key, body: '"str"' })).json.code).toBe(
      'INVALID_REQUEST',
    );
    expect(
      (await api.call('POST', '/v1/quote', { key: a.key, body: '{"__proto__":{"x":1}}' })).json
        .code,
    ).toBe('INVALID_REQUEST');
    const text = await api.call('POST', '/v1/quote', {
      key: a.key,
      body: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    expect([text.status, text.json.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    const big = await api.call('POST', '/v1/quote', {
      key: a.key,
      body: JSON.stringify({ modelId: 'x', inputs: { prompt: 'a'.repeat(1_100_000) } }),
    });
    expect([big.status, big.json.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    const nf = await api.call('GET', '/v1/nowhere', { key: a.key });
    expect([nf.status, nf.json.code]).toEqual([404, 'NOT_FOUND']);
    // Outside the API's prefixes an unknown address is the studio's 404 page for a browser, never JSON;
    // an API client (no HTML in Accept) keeps the JSON error body.
    const page = await fetch(`${svc.base}/nowhere`, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect([page.status, page.headers.get('content-type')]).toEqual([
      404,
      'text/html; charset=utf-8',
    ]);
    const plain = await fetch(`${svc.base}/nowhere`);
    expect([plain.status, plain.headers.get('content-type')]).toEqual([
      404,
      'application/json; charset=utf-8',
    ]);
    const echoed = await api.call('GET', '/v1/me', {
      key: a.key,
      headers: { 'x-request-id': 'abc-123' },
    });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123');
    const unsafe = await api.call('GET', '/v1/me', {
      key: a.key,
      headers: { 'x-request-id': 'a b"<>' },
    });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    for (const r of [bad, text, big, nf])
      expect(r.text).not.toMatch(/stack|at .*\.ts|SELECT|node_modules/);
  });
});

describe('operator API', () => {
  it('refuses API keys and bad tokens, validates bodies and names every bad field', async () => {
    const a = await api.account(0);
    for (const key of [a.key, 'nope', undefined]) {
      const r = await api.call('POST', '/admin/v1/accounts', {
        key,
        body: { email: 'x@example.test' },
      });
      expect([r.status, r.json.code]).toEqual([401, 'ADMIN_TOKEN_INVALID']);
    }
    const r = await api.call('POST', `/admin/v1/accounts/${a.accountId}/credits`, {
      key: ADMIN,
      body: { amountCents: 1.5, reason: 7, extra: 1 },
    });
    expect(r.status).toBe(400);
    expect(r.json.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'amountCents',
      'extra',
      'reason',
    ]);
    for (const amountCents of [0, -5, '5', 1e16, null]) {
      expect(
        (
          await api.call('POST', `/admin/v1/accounts/${a.accountId}/credits`, {
            key: ADMIN,
            body: { amountCents },
          })
        ).status,
      ).toBe(400);
    }
    const missing = await api.call('GET', '/admin/v1/accounts/acct_0000', { key: ADMIN });
    expect([missing.status, missing.json.code]).toEqual([404, 'ACCOUNT_NOT_FOUND']);
    const noKey = await api.call('DELETE', '/admin/v1/keys/key_00000000000000000000000000000000', {
      key: ADMIN,
    });
    expect([noKey.status, noKey.json.code]).toEqual([404, 'KEY_NOT_FOUND']);
    const dup = await api.call('POST', '/admin/v1/accounts', {
      key: ADMIN,
      body: { email: 'dup@example.test' },
    });
    expect(dup.status).toBe(201);
    expect(
      (
        await api.call('POST', '/admin/v1/accounts', {
          key: ADMIN,
          body: { email: 'DUP@example.test' },
        })
      ).status,
    ).toBe(400);
  });

  it('credits are ledger entries, the ledger pages newest first and adds up to the balance', async () => {
    const a = await api.account(0);
    for (const amountCents of [100, 200, 300])
      await api.admin('POST', `/accounts/${a.accountId}/credits`, {
        amountCents,
        reason: 'top-up',
      });
    expect((await api.admin('GET', `/accounts/${a.accountId}`)).balanceCents).toBe(600);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api.admin(
        'GET',
        `/accounts/${a.accountId}/ledger?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...page.data.map((e: { amountCents: number }) => e.amountCents));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([300, 200, 100]);
    const bad = await api.call('GET', `/admin/v1/accounts/${a.accountId}/ledger?cursor=..%2F`, {
      key: ADMIN,
    });
    expect([bad.status, bad.json.details[0].field]).toEqual([400, 'cursor']);
    await checkInvariants(dbh.db);
  });
});

describe('rate limits', () => {
  it('are shared by two server instances on one database', async () => {
    const second = await startTestService(dbh.url);
    try {
      await awayFromMinuteEdge();
      const a = await api.account(0, { rateLimitPerMinute: 10 });
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        statuses.push((await api.call('GET', '/v1/me', { key: a.key })).status);
        statuses.push(
          (await fetch(`${second.base}/v1/me`, { headers: { authorization: `Bearer ${a.key}` } }))
            .status,
        );
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(6);
      const r = await api.call('GET', '/v1/me', { key: a.key });
      expect(r.json.code).toBe('RATE_LIMITED');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.headers.get('ratelimit-policy')).toBe('"default";q=10;w=60');
      expect(r.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
    } finally {
      await second.stop();
    }
  });
});

describe('migrations', () => {
  it('apply exactly once when several processes start at the same moment', async () => {
    const { url, drop } = await emptyDatabase();
    const pools = Array.from({ length: 6 }, () => createPool(url, 2));
    try {
      const applied = await Promise.all(pools.map((p) => migrate(p)));
      expect(applied.flat().filter((f) => f.startsWith('001_'))).toHaveLength(1);
      const { rows } = await pools[0].query(
        'SELECT name, count(*)::int AS n FROM schema_migrations GROUP BY name',
      );
      expect(rows.every((r) => r.n === 1)).toBe(true);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
      await drop();
    }
  });
});
