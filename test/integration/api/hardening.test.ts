// The smaller defects of the review (issue 11), each reproduced: the create's check order, unknown
// routes under /v1 answered before authentication, unknown keys costing a lookup each, balances past
// 2^53, and /metrics open to anyone.
import { expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { awayFromMinuteEdge } from '../../helpers/minute.ts';
import { client, startTestService } from '../../helpers/service.ts';
import { MAX_BALANCE_CENTS } from '../../../src/services/accounts.ts';
import { UNKNOWN_KEYS_PER_MINUTE } from '../../../src/admission/unknown-keys.ts';

const f = serviceFixture();

it('checks the Idempotency-Key before the body, whatever the body', async () => {
  const a = await f.api.account(100);
  const bad = await f.api.call('POST', '/v1/generations', { key: a.key, body: '{not json' });
  expect([bad.status, bad.json.code]).toEqual([400, 'IDEMPOTENCY_KEY_REQUIRED']);
  const text = await f.api.call('POST', '/v1/generations', {
    key: a.key,
    body: 'hello',
    headers: { 'content-type': 'text/plain' },
  });
  expect([text.status, text.json.code]).toEqual([400, 'IDEMPOTENCY_KEY_REQUIRED']);
  // with the key, the body's own errors follow
  const withKey = await f.api.call('POST', '/v1/generations', {
    key: a.key,
    body: '{not json',
    headers: { 'idempotency-key': 'k1' },
  });
  expect([withKey.status, withKey.json.code]).toEqual([400, 'INVALID_REQUEST']);
});

it('authenticates and counts an unknown /v1 route before answering 404', async () => {
  const anonymous = await f.api.call('GET', '/v1/no-such-route');
  expect([anonymous.status, anonymous.json.code]).toEqual([401, 'API_KEY_MISSING']);
  await awayFromMinuteEdge();
  const a = await f.api.account(0, { rateLimitPerMinute: 2 });
  const first = await f.api.call('GET', '/v1/no-such-route', { key: a.key });
  expect([first.status, first.json.code]).toEqual([404, 'NOT_FOUND']);
  expect(first.headers.get('ratelimit')).toMatch(/^"default";r=1;t=\d+$/);
  await f.api.call('DELETE', '/v1/models/x/y', { key: a.key });
  const third = await f.api.call('GET', '/v1/me', { key: a.key });
  expect([third.status, third.json.code]).toEqual([429, 'RATE_LIMITED']);
  // outside /v1, unknown routes stay plain 404s
  expect((await f.api.call('GET', '/no-such-route')).status).toBe(404);
});

it('keeps balances within safe integers: a guarded credit and a database constraint', async () => {
  const a = await f.api.account(0);
  await f.dbh.db.query('UPDATE accounts SET balance_cents = $2 WHERE id = $1', [
    a.accountId,
    MAX_BALANCE_CENTS - 10,
  ]);
  const over = await f.api.call('POST', `/admin/v1/accounts/${a.accountId}/credits`, {
    key: 'test-admin-token-0123456789abcdef',
    body: { amountCents: 11 },
  });
  expect([over.status, over.json.code, over.json.details[0].field]).toEqual([
    400,
    'INVALID_INPUT',
    'amountCents',
  ]);
  const exact = await f.api.admin('POST', `/accounts/${a.accountId}/credits`, { amountCents: 10 });
  expect(exact.balanceCents).toBe(MAX_BALANCE_CENTS);
  await expect(
    f.dbh.db.query('UPDATE accounts SET balance_cents = balance_cents + 1 WHERE id = $1', [
      a.accountId,
    ]),
  ).rejects.toThrow(/accounts_balance_safe/);
  await f.dbh.db.query('DELETE FROM ledger_entries WHERE account_id = $1', [a.accountId]);
  await f.dbh.db.query('UPDATE accounts SET balance_cents = 0 WHERE id = $1', [a.accountId]);
});

it('reports the event loop in /readyz', async () => {
  const ready = await f.api.call('GET', '/readyz');
  expect([ready.status, ready.json.checks.eventLoop]).toEqual([200, 'ok']);
});

it('remembers unknown keys, and limits how many unknown keys one address may try', async () => {
  const known = await f.api.account(0);
  expect((await f.api.call('GET', '/v1/me', { key: known.key })).status).toBe(200);
  const fake = (i: number) =>
    `rg_live_${'1'.repeat(40)}${'ABCDEFGHJK'[Math.floor(i / 10) % 10]}${'ABCDEFGHJK'[i % 10]}`;
  // the same unknown key again and again: one lookup, counted once
  for (let i = 0; i < UNKNOWN_KEYS_PER_MINUTE * 2; i++) {
    const r = await f.api.call('GET', '/v1/me', { key: fake(0) });
    expect([r.status, r.json.code]).toEqual([401, 'API_KEY_INVALID']);
  }
  // distinct unknown keys: refused with 429 once the address has tried too many in a minute (the
  // tries span at most two minutes, so one of them sees more than the limit)
  const statuses: number[] = [];
  for (let i = 1; i <= 2 * UNKNOWN_KEYS_PER_MINUTE + 2; i++)
    statuses.push((await f.api.call('GET', '/v1/me', { key: fake(i) })).status);
  expect(statuses.slice(0, UNKNOWN_KEYS_PER_MINUTE - 1).every((s) => s === 401)).toBe(true);
  expect(statuses).toContain(429);
  expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
  // a key this process has seen valid still works from that address, after its cache entry expired
  await new Promise((r) => setTimeout(r, 600));
  expect((await f.api.call('GET', '/v1/me', { key: known.key })).status).toBe(200);
});

it('serves /metrics only with the metrics token when one is set', async () => {
  const svc = await startTestService(f.dbh.url, {
    role: 'api',
    env: { RENDERGATE_METRICS_TOKEN: 'metrics-token-0123456789' },
  });
  try {
    const c = client(svc.base);
    const none = await c.call('GET', '/metrics');
    expect([none.status, none.json.code]).toEqual([401, 'ADMIN_TOKEN_INVALID']);
    expect((await c.call('GET', '/metrics', { key: 'wrong-token-0123456789' })).status).toBe(401);
    const ok = await c.call('GET', '/metrics', { key: 'metrics-token-0123456789' });
    expect(ok.status).toBe(200);
    expect(ok.text).toMatch(/^rendergate_event_loop_stalled 0$/m);
  } finally {
    await svc.stop();
  }
});
