// Pools of model servers (`urls`, `concurrencyPerUrl`): renders are spread over the servers, none ever
// gets more than its share at once, and a server whose health check fails is passed over.
import { expect, it } from 'vitest';
import { cogFake, type CogFake } from '../../fakes/cog.ts';
import { create, finalOk, invariants, remoteFixture, videoModel } from './harness.ts';
import { waitFor } from '../../helpers/wait.ts';

let a: CogFake;
let b: CogFake;
const f = remoteFixture({
  before: async () => {
    a = await cogFake({ delayMs: 300 });
    b = await cogFake({ delayMs: 300 });
  },
  models: () => [
    videoModel('t/pool', { driver: 'cog', urls: [a.base, b.base], concurrencyPerUrl: 1 }),
  ],
  env: { RENDERGATE_WORKER_CONCURRENCY: '4' },
  after: async () => {
    await a.close();
    await b.close();
  },
});

it('spreads renders over the pool, never more than concurrencyPerUrl on a server', async () => {
  const gens = await Promise.all(
    Array.from({ length: 6 }, (_, i) => create(f, 't/pool', { prompt: `shot ${i}` })),
  );
  for (const g of gens) await finalOk(f, g.id);
  expect(a.maxInFlight).toBe(1);
  expect(b.maxInFlight).toBe(1);
  expect(a.predictions.length).toBeGreaterThan(0);
  expect(b.predictions.length).toBeGreaterThan(0);
  expect(a.predictions.length + b.predictions.length).toBe(6);
  await invariants(f);
});

it('passes over a server whose health check fails, and uses it again once it is back', async () => {
  b.status = 'DEFUNCT';
  await waitFor(
    'b down',
    async () =>
      (await (await fetch(`${f.svc.base}/readyz`)).json()).backends.some(
        (s: any) => s.url === b.base && !s.healthy,
      ),
    { timeoutMs: 10_000 },
  );
  const nb = b.predictions.length;
  const gens = await Promise.all(
    Array.from({ length: 3 }, (_, i) => create(f, 't/pool', { prompt: `only a ${i}` })),
  );
  for (const g of gens) await finalOk(f, g.id);
  expect(b.predictions.length).toBe(nb);
  b.status = 'READY';
  a.status = 'SETUP_FAILED';
  await waitFor(
    'a down, b up',
    async () =>
      (await (await fetch(`${f.svc.base}/readyz`)).json()).backends.every(
        (s: any) => s.healthy === (s.url === b.base),
      ),
    { timeoutMs: 10_000 },
  );
  const na = a.predictions.length;
  const g = await create(f, 't/pool', { prompt: 'only b' });
  await finalOk(f, g.id);
  expect(a.predictions.length).toBe(na);
  a.status = 'READY';
});
