// Webhooks (docs/api.md "Webhooks") against a real receiver that verifies with the standardwebhooks
// package: endpoints and their limits, one signed event per status change to each subscribed endpoint,
// retries with the same webhook-id when the receiver fails or hangs, 410 disabling the endpoint, and
// private targets refused (a failed attempt) when the server does not allow them.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { webhookReceiver } from '../../helpers/webhook-receiver.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { waitFor } from '../../helpers/wait.ts';

const f = serviceFixture({ env: { RENDERGATE_WEBHOOK_RETRY_SECONDS: '1,1,1' } });
let rx: Awaited<ReturnType<typeof webhookReceiver>>;
beforeAll(async () => {
  rx = await webhookReceiver();
});
afterAll(async () => {
  await rx?.close();
});

const TEXT = { modelId: 'rendergate/shot-list', inputs: { text: 'A gull lands. The tide turns.' } };
const create = (key: string, body: object = TEXT) =>
  f.api.call('POST', '/v1/generations', {
    key,
    body,
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
const endpoint = async (key: string, path: string, events?: string[]) => {
  const r = await f.api.call('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: rx.url(path), ...(events ? { events } : {}) },
  });
  expect(r.status, r.text).toBe(201);
  rx.secret(path, r.json.secret);
  return r.json;
};
const deliveries = async (key: string, id: string) =>
  (await f.api.call('GET', `/v1/webhook-endpoints/${id}/deliveries`, { key })).json.data;
/** The endpoint's deliveries once the newest has `status` (the receiver answers before the worker records it). */
async function settled(key: string, id: string, status: string): Promise<any[]> {
  return waitFor(
    `the newest delivery ${status}`,
    async () => {
      const ds = await deliveries(key, id);
      return ds[0]?.status === status && ds;
    },
    { intervalMs: 50 },
  );
}

describe('endpoints', () => {
  it('create, list without secrets, read with its secret, delete; at most 10; bad fields named', async () => {
    const a = await f.api.account(0);
    const b = await f.api.account(0);
    const e = await endpoint(a.key, '/crud');
    expect(e).toEqual({
      id: expect.stringMatching(/^whe_[0-9a-f]{32}$/),
      url: rx.url('/crud'),
      events: [
        'generation.started',
        'generation.succeeded',
        'generation.failed',
        'generation.refunded',
        'account.balance_low',
        'budget.threshold_reached',
      ],
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
      enabled: true,
      mode: 'live',
      createdAt: expect.any(String),
    });
    expect((await f.api.call('GET', `/v1/webhook-endpoints/${e.id}`, { key: a.key })).json).toEqual(
      e,
    );
    for (let i = 0; i < 9; i++) await endpoint(a.key, `/crud-${i}`, ['generation.failed']);
    const eleventh = await f.api.call('POST', '/v1/webhook-endpoints', {
      key: a.key,
      body: { url: rx.url('/x') },
    });
    expect([eleventh.status, eleventh.json.code]).toEqual([409, 'WEBHOOK_ENDPOINT_LIMIT']);
    const list = await f.api.call('GET', '/v1/webhook-endpoints?limit=4', { key: a.key });
    expect(list.json.data).toHaveLength(4);
    expect(list.json.data.every((x: any) => !('secret' in x))).toBe(true);
    expect(list.json.nextCursor).toEqual(expect.any(String));
    expect(
      (await f.api.call('GET', `/v1/webhook-endpoints/${e.id}`, { key: b.key })).json.code,
    ).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    expect(
      (await f.api.call('DELETE', `/v1/webhook-endpoints/${e.id}`, { key: b.key })).status,
    ).toBe(404);
    expect(
      (await f.api.call('DELETE', `/v1/webhook-endpoints/${e.id}`, { key: a.key })).json,
    ).toEqual({ id: e.id, deleted: true });
    expect((await f.api.call('GET', `/v1/webhook-endpoints/${e.id}`, { key: a.key })).status).toBe(
      404,
    );
    expect(
      (
        await f.api.call('POST', '/v1/webhook-endpoints', {
          key: a.key,
          body: { url: rx.url('/again') },
        })
      ).status,
    ).toBe(201);
    for (const [body, field] of [
      [{}, 'url'],
      [{ url: 'ftp://x.example' }, 'url'],
      [{ url: 'x'.repeat(3000) }, 'url'],
      [{ url: 'https://x.example', events: [] }, 'events'],
      [{ url: 'https://x.example', events: ['generation.nope'] }, 'events'],
      [{ url: 'https://x.example', events: 'generation.failed' }, 'events'],
      [{ url: 'https://x.example', extra: 1 }, 'extra'],
    ] as const) {
      const r = await f.api.call('POST', '/v1/webhook-endpoints', { key: b.key, body });
      expect([r.status, r.json.code, r.json.details?.[0]?.field]).toEqual([
        400,
        'INVALID_INPUT',
        field,
      ]);
    }
  });

  it("have a mode: a test key makes, sees and deletes test endpoints only, never a live one's secret", async () => {
    const a = await f.api.account(0);
    const test = (await f.api.admin('POST', `/accounts/${a.accountId}/keys`, { mode: 'test' })).key;
    const live = await endpoint(a.key, '/live-mode');
    const made = await endpoint(test, '/test-mode');
    expect([live.mode, made.mode]).toEqual(['live', 'test']);
    // An endpoint made before modes existed (a row without one) is live.
    const old = `whe_${'0'.repeat(31)}1`;
    await f.dbh.db.query(
      `INSERT INTO webhook_endpoints (id, account_id, url, events, secret)
       VALUES ($1, $2, 'https://old.example/hook', ARRAY['generation.failed'], 'whsec_b2xk')`,
      [old, a.accountId],
    );
    const ids = async (key: string) =>
      (await f.api.call('GET', '/v1/webhook-endpoints', { key })).json.data.map((e: any) => [
        e.id,
        e.mode,
      ]);
    expect(await ids(test)).toEqual([[made.id, 'test']]);
    expect(await ids(a.key)).toEqual([
      [live.id, 'live'],
      [old, 'live'],
    ]);
    // Another mode's endpoint is unknown, as another account's is: read, deliveries and delete.
    for (const [key, id] of [
      [test, live.id],
      [test, old],
      [a.key, made.id],
    ]) {
      for (const [method, p] of [
        ['GET', `/v1/webhook-endpoints/${id}`],
        ['GET', `/v1/webhook-endpoints/${id}/deliveries`],
        ['DELETE', `/v1/webhook-endpoints/${id}`],
      ]) {
        const r = await f.api.call(method, p, { key });
        expect([r.status, r.json.code, r.text.includes('whsec_')], `${method} ${p}`).toEqual([
          404,
          'WEBHOOK_ENDPOINT_NOT_FOUND',
          false,
        ]);
      }
    }
    expect(
      (await f.api.call('GET', `/v1/webhook-endpoints/${live.id}`, { key: a.key })).json,
    ).toEqual(live);
    // At most 10 of each mode: the test endpoints never take the live ones' room.
    for (let i = 0; i < 9; i++) await endpoint(test, `/test-${i}`, ['generation.failed']);
    const eleventh = await f.api.call('POST', '/v1/webhook-endpoints', {
      key: test,
      body: { url: rx.url('/x') },
    });
    expect([eleventh.status, eleventh.json.code, eleventh.json.message]).toEqual([
      409,
      'WEBHOOK_ENDPOINT_LIMIT',
      'An account has at most 10 test webhook endpoints; delete one first.',
    ]);
    expect((await endpoint(a.key, '/live-2')).mode).toBe('live');
    expect(
      (await f.api.call('DELETE', `/v1/webhook-endpoints/${made.id}`, { key: test })).status,
    ).toBe(200);
    expect((await endpoint(test, '/test-again')).mode).toBe('test');
  });
});

describe('delivery', () => {
  it('started and succeeded, signed per Standard Webhooks, with the Generation as data, to each subscribed endpoint', async () => {
    const a = await f.api.account(100_000);
    const all = await endpoint(a.key, '/ok');
    const refundsOnly = await endpoint(a.key, '/ok-refunds', ['generation.refunded']);
    const g = await create(a.key);
    await waitFor('the webhooks', () =>
      rx.received.some(
        (x) =>
          x.path === '/ok' &&
          x.body.type === 'generation.succeeded' &&
          x.body.data.id === g.json.id,
      ),
    );
    const mine = rx.received.filter((x) => x.path === '/ok' && x.body.data.id === g.json.id);
    expect(mine.map((x) => x.body.type).sort()).toEqual([
      'generation.started',
      'generation.succeeded',
    ]);
    expect(mine.every((x) => x.verified)).toBe(true);
    const final = (await f.api.call('GET', `/v1/generations/${g.json.id}`, { key: a.key })).json;
    expect(mine.find((x) => x.body.type === 'generation.succeeded')!.body).toEqual({
      type: 'generation.succeeded',
      timestamp: expect.any(String),
      livemode: true,
      data: final,
    });
    expect(Math.abs(Number(mine[0].timestamp) - Date.now() / 1000)).toBeLessThan(60);
    await settled(a.key, all.id, 'delivered');
    const ds = await deliveries(a.key, all.id);
    expect(ds).toHaveLength(2);
    expect(ds[0]).toEqual({
      id: expect.stringMatching(/^msg_/),
      eventId: expect.stringMatching(/^evt_/),
      type: expect.any(String),
      generationId: g.json.id,
      attempts: 1,
      status: 'delivered',
      lastResponseStatus: 204,
      lastError: null,
      createdAt: expect.any(String),
      nextAttemptAt: null,
    });
    expect(new Set(ds.map((d: any) => d.id))).toEqual(new Set(mine.map((x) => x.id)));
    // the refunds-only endpoint heard nothing until a refund: a cancel
    expect(rx.received.filter((x) => x.path === '/ok-refunds')).toHaveLength(0);
    const held = await create(a.key, {
      modelId: 'rendergate/image-to-video',
      inputs: { prompt: 'x', image: f.img.url('/held/wh.png') },
    });
    await f.api.call('POST', `/v1/generations/${held.json.id}/cancel`, { key: a.key });
    await waitFor('the webhooks', () =>
      rx.received.some((x) => x.path === '/ok-refunds' && x.body.data.id === held.json.id),
    );
    expect(
      rx.received
        .filter((x) => x.path === '/ok-refunds')
        .map((x) => [x.body.type, x.body.data.status, x.verified]),
    ).toEqual([['generation.refunded', 'refunded', true]]);
    expect((await settled(a.key, refundsOnly.id, 'delivered'))[0]).toMatchObject({
      type: 'generation.refunded',
      attempts: 1,
    });
    f.img.release('/held/wh.png');
  });

  it('a failing receiver gets the same webhook-id on every attempt until it accepts; one that never does ends failed', async () => {
    const a = await f.api.account(100_000);
    const flaky = await endpoint(a.key, '/fail-2', ['generation.succeeded']);
    const never = await endpoint(a.key, '/fail-99', ['generation.succeeded']);
    const g = await create(a.key);
    await waitFor(
      'the webhooks',
      () =>
        rx.received.filter((x) => x.path === '/fail-2' && x.body.data.id === g.json.id).length ===
        3,
    );
    const attempts = rx.received.filter(
      (x) => x.path === '/fail-2' && x.body.data.id === g.json.id,
    );
    expect(new Set(attempts.map((x) => x.id)).size).toBe(1);
    expect(new Set(attempts.map((x) => JSON.stringify(x.body))).size).toBe(1); // the same body every time
    expect(attempts[1].at - attempts[0].at).toBeGreaterThanOrEqual(900); // after the retry delay (1 s here)
    expect((await settled(a.key, flaky.id, 'delivered'))[0]).toMatchObject({
      attempts: 3,
      status: 'delivered',
      lastResponseStatus: 200,
      lastError: 'HTTP 500',
      nextAttemptAt: null,
    });
    // 1 attempt + 3 retries, then failed
    await waitFor(
      'the webhooks',
      () =>
        rx.received.filter((x) => x.path === '/fail-99' && x.body.data.id === g.json.id).length ===
        4,
    );
    expect((await settled(a.key, never.id, 'failed'))[0]).toMatchObject({
      attempts: 4,
      lastResponseStatus: 500,
      lastError: 'HTTP 500',
      nextAttemptAt: null,
    });
  });

  it('410 disables the endpoint: no later event is sent to it', async () => {
    const a = await f.api.account(100_000);
    const gone = await endpoint(a.key, '/gone', ['generation.succeeded']);
    await create(a.key);
    await waitFor('the webhooks', () => rx.received.some((x) => x.path === '/gone'));
    await waitFor(
      'the endpoint disabled',
      async () =>
        !(await f.api.call('GET', `/v1/webhook-endpoints/${gone.id}`, { key: a.key })).json.enabled,
      { intervalMs: 50 },
    );
    expect((await deliveries(a.key, gone.id))[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastResponseStatus: 410,
      lastError: 'HTTP 410',
    });
    const before = rx.received.filter((x) => x.path === '/gone').length;
    // A second endpoint of the account, still enabled, is the witness: the event that would have gone
    // to /gone as well has been sent once it reaches /witness.
    await endpoint(a.key, '/witness', ['generation.succeeded']);
    const g2 = await create(a.key);
    await waitFor('the witness endpoint to get the event', () =>
      rx.received.some((x) => x.path === '/witness' && x.body.data.id === g2.json.id),
    );
    expect(rx.received.filter((x) => x.path === '/gone')).toHaveLength(before);
    expect(await deliveries(a.key, gone.id)).toHaveLength(1);
  });

  it('a receiver that hangs is given up on after 15 s and the delivery retried with the same webhook-id', async () => {
    const a = await f.api.account(100_000);
    const hang = await endpoint(a.key, '/hang-first', ['generation.succeeded']);
    const g = await create(a.key);
    await waitFor(
      'the webhooks',
      () =>
        rx.received.filter((x) => x.path === '/hang-first' && x.body.data.id === g.json.id)
          .length === 2,
      { timeoutMs: 40_000 },
    );
    const [first, second] = rx.received.filter(
      (x) => x.path === '/hang-first' && x.body.data.id === g.json.id,
    );
    expect(second.id).toBe(first.id);
    expect(second.at - first.at).toBeGreaterThanOrEqual(15_000);
    expect(rx.maxConcurrentPerId()).toBe(1);
    expect((await settled(a.key, hang.id, 'delivered'))[0]).toMatchObject({
      attempts: 2,
      lastResponseStatus: 200,
      lastError: 'no answer within 15 s',
    });
  }, 60_000);
});

describe('targets on private networks', () => {
  let dbh: Awaited<ReturnType<typeof freshDatabase>>;
  let svc: TestService;
  beforeAll(async () => {
    dbh = await freshDatabase();
    svc = await startTestService(dbh.url, {
      env: { RENDERGATE_ALLOW_PRIVATE_URLS: '0', RENDERGATE_WEBHOOK_RETRY_SECONDS: '1' },
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await dbh?.drop();
  });

  it('are refused without a connection, each a failed attempt, unless RENDERGATE_ALLOW_PRIVATE_URLS=1', async () => {
    const api = client(svc.base);
    const a = await api.account(100_000);
    const e = (
      await api.call('POST', '/v1/webhook-endpoints', {
        key: a.key,
        // A host name: checked when it is resolved, at each delivery (a literal private address is
        // refused at creation instead, test/integration/api/http-amended.test.ts).
        body: {
          url: rx.url('/private').replace('127.0.0.1', 'localhost'),
          events: ['generation.succeeded'],
        },
      })
    ).json;
    const g = await api.call('POST', '/v1/generations', {
      key: a.key,
      body: TEXT,
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    await api.waitFinal(a.key, g.json.id);
    const ds = await waitFor(
      'the delivery failed',
      async () => {
        const data: any[] = (
          await api.call('GET', `/v1/webhook-endpoints/${e.id}/deliveries`, { key: a.key })
        ).json.data;
        return data[0]?.status === 'failed' && data;
      },
      { intervalMs: 100 },
    );
    expect(ds[0]).toMatchObject({
      attempts: 2,
      lastResponseStatus: null,
      nextAttemptAt: null,
      lastError: 'address refused: 127.0.0.1 is a loopback address',
    });
    expect(rx.received.filter((x) => x.path === '/private')).toHaveLength(0);
  });
});
