// The database stopped under a running service, then started again by the test: requests answer 503
// with Retry-After (fast, never 500), workers pause and resume by themselves, nothing accepted is lost.
import crypto from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPool } from '../../../src/db/pool.ts';
import { privatePostgres, type PrivatePostgres } from '../../helpers/db.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { imageServer } from '../../helpers/images.ts';
import { waitFor } from '../../helpers/wait.ts';

let pg: PrivatePostgres;
let svc: TestService;
const logged: string[] = [];

beforeAll(async () => {
  pg = await privatePostgres();
  svc = await startTestService(pg.url, {
    logger: pino(
      { level: 'warn' },
      {
        write: (line: string) => {
          logged.push(line);
        },
      },
    ),
  });
});
afterAll(async () => {
  await svc?.stop();
  await pg?.destroy();
});

it('answers 503 while the database is down, and recovers by itself with nothing lost', async () => {
  const api = client(svc.base);
  const a = await api.account(100_000);
  const create = (text: string) =>
    api.call('POST', '/v1/generations', {
      key: a.key,
      body: { modelId: 'rendergate/shot-list', inputs: { text } },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
  const img = await imageServer();
  // two renders running through the outage (held mid-fetch), five more queued behind them
  const held = await Promise.all(
    [0, 1].map((i) =>
      api.call('POST', '/v1/generations', {
        key: a.key,
        body: {
          modelId: 'rendergate/image-to-video',
          inputs: { prompt: 'p', image: img.url(`/held/${i}.png`) },
        },
        headers: { 'idempotency-key': crypto.randomUUID() },
      }),
    ),
  );
  await waitFor(
    'both held renders fetching their image',
    () => (img.hits['/held/0.png'] ?? 0) + (img.hits['/held/1.png'] ?? 0) >= 2,
    { intervalMs: 50 },
  );
  const before = [
    ...held,
    ...(await Promise.all(
      Array.from({ length: 5 }, (_, i) => create(`Before the outage ${i}. It was calm.`)),
    )),
  ];
  expect(before.every((r) => r.status === 202)).toBe(true);

  await pg.stop();
  for (const [method, p] of [
    ['GET', '/v1/me'],
    ['GET', `/v1/generations/${before[0].json.id}`],
    ['POST', '/v1/quote'],
  ] as const) {
    const t0 = Date.now();
    const r = await api.call(method, p, {
      key: a.key,
      body:
        method === 'POST' ? { modelId: 'rendergate/shot-list', inputs: { text: 'x' } } : undefined,
    });
    // the key may still be cached for a moment, so either the key lookup or the query itself meets the outage
    expect(Date.now() - t0).toBeLessThan(15_000); // answered, not held until the 30 s request timeout
    if (r.status !== 200) {
      expect([r.status, r.json.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  }
  const during = await create('During the outage. Nothing should be charged.');
  expect([during.status, during.json.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
  const ready = await api.call('GET', '/readyz');
  expect(ready.status).toBe(503);
  expect((await api.call('GET', '/healthz')).status).toBe(200);

  // Back only once the service has tried to reconnect its LISTEN connections and failed: the worker
  // and the cache have met the outage too, not only the requests above.
  await waitFor('a failed reconnect logged', () =>
    logged.some((l) => l.includes('listener reconnect failed')),
  );
  await pg.start();
  img.release('/held/0.png');
  img.release('/held/1.png');

  // the service recovers by itself: the first requests may still meet dead pooled connections
  await waitFor(
    'a request to succeed again',
    async () => (await api.call('GET', '/v1/me', { key: a.key })).status === 200,
    { intervalMs: 200 },
  );
  const after = await create('After the outage. Work goes on.');
  expect(after.status).toBe(202);
  expect((await api.call('GET', '/readyz')).status).toBe(200);

  // every accepted render finishes: the workers resumed without a restart
  const ids = [...before, after].map((r) => r.json.id as string);
  for (const id of ids) expect((await api.waitFinal(a.key, id)).status).toBe('succeeded');
  const db = createPool(pg.url, 2);
  try {
    await checkInvariants(db);
    const { rows } = await db.query('SELECT count(*)::int AS n FROM generations');
    expect(rows[0].n).toBe(8);
  } finally {
    await db.end();
    await img.close();
  }
}, 120_000);
