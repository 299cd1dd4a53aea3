// The SDK through a database outage: the service answers 503 with Retry-After, the SDK waits as told and
// retries, and once the database is back its read and its create succeed, the create charged once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Rendergate } from '../../../packages/client/src/index.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../../src/db/embedded.ts';
import { createPool } from '../../../src/db/pool.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { checkedFetch } from '../../helpers/openapi-check.ts';
import { client, freePort, startTestService, type TestService } from '../../helpers/service.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-sdk-outage-'));
fs.chmodSync(dir, 0o755);
let pg: EmbeddedPostgres;
let port: number;
let svc: TestService;

beforeAll(async () => {
  port = await freePort();
  pg = await startEmbeddedPostgres(path.join(dir, 'data'), () => {}, port);
  svc = await startTestService(pg.url);
});
afterAll(async () => {
  await svc?.stop();
  await pg?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('retries 503 answers after Retry-After until the database is back, and the create charges once', async () => {
  const a = await client(svc.base).account(1_000);
  const seen: number[] = [];
  const checked = checkedFetch(svc.base);
  const rg = new Rendergate({ apiKey: a.key, baseUrl: svc.base, maxRetries: 20,
    fetch: async (input, init) => { const r = await checked(input, init); seen.push(r.status); return r; } });
  await rg.me(); // fetches the document while the database is up, and warms the key
  await pg.stop();
  const me = rg.me();
  const created = rg.generations.create('rendergate/shot-list', { text: 'During the outage. It was calm.' });
  for (const until = Date.now() + 20_000; !seen.includes(503) && Date.now() < until;) await new Promise((r) => setTimeout(r, 100));
  expect(seen).toContain(503);
  pg = await startEmbeddedPostgres(path.join(dir, 'data'), () => {}, port);
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
