// The SDK through a database outage: the service answers 503 with Retry-After, the SDK waits as told and
// retries, and once the database is back its read and its create succeed, the create charged once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Rendergate } from '../../../packages/client/src/index.ts';
import { createPool } from '../../../src/db/pool.ts';
import { privatePostgres, type PrivatePostgres } from '../../helpers/db.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { checkedFetch } from '../../helpers/openapi-check.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { waitFor } from '../../helpers/wait.ts';

let pg: PrivatePostgres;
let svc: TestService;

beforeAll(async () => {
  pg = await privatePostgres();
  svc = await startTestService(pg.url);
});
afterAll(async () => {
  await svc?.stop();
  await pg?.destroy();
});

it('retries 503 answers after Retry-After until the database is back, and the create charges once', async () => {
  const a = await client(svc.base).account(1_000);
  const seen: number[] = [];
  const checked = checkedFetch(svc.base);
  const rg = new Rendergate({
    apiKey: a.key,
    baseUrl: svc.base,
    maxRetries: 20,
    fetch: async (input, init) => {
      const r = await checked(input, init);
      seen.push(r.status);
      return r;
    },
  });
  await rg.me(); // fetches the document while the database is up, and warms the key
  await pg.stop();
  const me = rg.me();
  const created = rg.generations.create('rendergate/shot-list', {
    text: 'During the outage. It was calm.',
  });
  await waitFor('a 503 answer', () => seen.includes(503), { intervalMs: 100 });
  await pg.start();
  expect((await me).balanceCents).toBeGreaterThan(0);
  const g = await created;
  expect((await rg.generations.wait(g.id)).status).toBe('succeeded');
  expect((await rg.me()).balanceCents).toBe(1_000 - g.costCents);
  const db = createPool(pg.url, 2);
  try {
    await checkInvariants(db);
    const { rows } = await db.query('SELECT count(*)::int AS n FROM generations');
    expect(rows[0].n).toBe(1);
  } finally {
    await db.end();
  }
}, 120_000);
