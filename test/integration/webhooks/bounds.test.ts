// Webhook attempts are bounded by construction and fair across accounts (docs/api.md "Abuse limits"):
// a receiver that answers 200 and then drips its body forever, or floods it, holds the service's socket
// for one bounded attempt only; an account whose nine endpoints hang delays another account's delivery
// by no more than 2 s. The service's sockets to the receiver are counted in /proc (it runs in this
// process).
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { hostileReceiver, openFds } from '../../helpers/hostile-receiver.ts';
import { socketsTo } from '../../helpers/proc-sockets.ts';
import { waitFor } from '../../helpers/wait.ts';

const f = serviceFixture({ env: { RENDERGATE_WEBHOOK_RETRY_SECONDS: '600' } });
let rx: Awaited<ReturnType<typeof hostileReceiver>>;
let port: number;
beforeAll(async () => {
  rx = await hostileReceiver();
  port = Number(new URL(rx.base).port);
});
afterAll(async () => {
  await rx?.close();
});

const TEXT = { modelId: 'rendergate/shot-list', inputs: { text: 'A gull lands. The tide turns.' } };
const create = async (key: string) =>
  (
    await f.api.call('POST', '/v1/generations', {
      key,
      body: TEXT,
      headers: { 'idempotency-key': crypto.randomUUID() },
    })
  ).json;
const endpoint = async (key: string, path: string, events = ['generation.succeeded']) => {
  const r = await f.api.call('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: rx.url(path), events },
  });
  expect(r.status, r.text).toBe(201);
  return r.json;
};
const deliveries = async (key: string, id: string) =>
  (await f.api.call('GET', `/v1/webhook-endpoints/${id}/deliveries`, { key })).json.data as any[];

describe('one attempt is bounded', () => {
  it('a receiver dripping its answer forever: its sockets close, the process returns to its baseline', async () => {
    const a = await f.api.account(100_000);
    const warm = await create(a.key); // pools and caches warm before the baseline
    await f.api.waitFinal(a.key, warm.id);
    const baseline = await openFds();
    expect(await socketsTo(port)).toBe(0);
    const eps = [await endpoint(a.key, '/drip/1'), await endpoint(a.key, '/drip/2')];
    for (let i = 0; i < 2; i++) await create(a.key);
    // during: the attempts are connected and being dripped at
    await waitFor('two dripping connections', () => rx.open('drip') >= 2, { timeoutMs: 60_000 });
    const during = await socketsTo(port);
    expect(during).toBeGreaterThanOrEqual(2);
    // each attempt ends (64 KiB read or 15 s, whichever first), and its socket with it
    for (const e of eps) {
      await waitFor('deliveries recorded', async () => {
        const ds = await deliveries(a.key, e.id);
        return ds.length === 2 && ds.every((d) => d.status === 'delivered');
      });
    }
    await waitFor('every dripping connection closed', () => rx.open('drip') === 0, {
      timeoutMs: 30_000,
    });
    await waitFor('no socket to the receiver', async () => (await socketsTo(port)) === 0);
    const after = await openFds();
    console.log(
      `open fds: baseline ${baseline}, sockets to the receiver during ${during}, after ${after}`,
    );
    // The assertion is on this receiver's sockets (0, above): the process's total (logged) also moves
    // with database connections and with other test files running in the same process.
    const ds = await deliveries(a.key, eps[0].id);
    expect(ds[0]).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastResponseStatus: 200,
      lastError: null,
    });
  }, 90_000);

  it('a receiver flooding its answer: the service stops reading at 64 KiB and closes the socket', async () => {
    const a = await f.api.account(100_000);
    const e = await endpoint(a.key, '/flood/1');
    await create(a.key);
    await waitFor('the flood request', () => rx.received.some((r) => r.path === '/flood/1'), {
      timeoutMs: 60_000,
    });
    const started = Date.now();
    // the flood never ends by itself: only the service can close this connection
    await waitFor('the flood connection closed', () => rx.open('flood') === 0, {
      timeoutMs: 30_000,
    });
    expect(Date.now() - started).toBeLessThan(15_000); // closed at the byte limit, not at the deadline
    const ds = await waitFor('delivered', async () => {
      const x = await deliveries(a.key, e.id);
      return x[0]?.status === 'delivered' ? x : undefined;
    });
    expect(ds[0]).toMatchObject({ lastResponseStatus: 200 });
    expect(await socketsTo(port)).toBe(0);
  }, 60_000);
});

describe('fair across accounts', () => {
  it("account B with 9 hanging endpoints and 10 renders: account A's delivery still arrives within 2 s", async () => {
    const b = await f.api.account(100_000);
    for (let i = 0; i < 9; i++)
      await endpoint(b.key, `/hang/${i}`, ['generation.started', 'generation.succeeded']);
    const renders = [];
    for (let i = 0; i < 10; i++) renders.push(await create(b.key));
    for (const g of renders) await f.api.waitFinal(b.key, g.id);
    // B's attempts hang at the receiver (each for up to 15 s) with 180 more deliveries due behind them
    await waitFor("B's attempts hanging", () => rx.open('hang') >= 4, { timeoutMs: 60_000 });
    const a = await f.api.account(100_000);
    await endpoint(a.key, '/ok/a');
    const g = await create(a.key);
    const done = await f.api.waitFinal(a.key, g.id);
    await waitFor(
      "A's delivery",
      () => rx.received.some((r) => r.path === '/ok/a' && r.generationId === g.id),
      { timeoutMs: 30_000 },
    );
    const got = rx.received.find((r) => r.path === '/ok/a' && r.generationId === g.id)!;
    const hangingThen = rx.open('hang');
    const delay = got.at - Date.parse(done.completedAt);
    console.log(
      `A's delivery ${delay} ms after its render completed; B's attempts hanging: ${hangingThen}`,
    );
    expect(hangingThen).toBeGreaterThan(0); // B was still hanging when A's delivery came through
    expect(delay).toBeLessThan(2_000);
  }, 120_000);
});
