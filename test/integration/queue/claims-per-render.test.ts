// How often the worker claims (src/queue/worker.ts): a render that ends while slots are free, its model
// unlimited and its account below its limit, claims nothing more (the claim that took it took every
// runnable job; a job queued since wakes the worker itself), so a render costs one claim, not two; and
// an account held back by its running limit still gets its next render as soon as one of its own ends.
// A real service (worker and API) on a real database.
import crypto from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { waitFor } from '../../helpers/wait.ts';
import { JOBS_CHANNEL } from '../../../src/db/channels.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let api: ReturnType<typeof client>;
beforeAll(async () => {
  dbh = await freshDatabase();
  svc = await startTestService(dbh.url, {
    env: { RENDERGATE_WORKER_CONCURRENCY: '8', RENDERGATE_ACCOUNT_CONCURRENCY: '2' },
  });
  api = client(svc.base);
});
afterAll(async () => {
  await svc?.stop();
  await dbh?.drop();
});

const TEXT = { modelId: 'rendergate/shot-list', inputs: { text: 'A gull lands. The tide turns.' } };
const create = async (key: string) => {
  const r = await api.call('POST', '/v1/generations', {
    key,
    body: TEXT,
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(r.status, r.text).toBe(202);
  return r.json.id as string;
};
const finished = async (key: string, id: string, timeoutMs = 60_000) =>
  waitFor(
    `render ${id}`,
    async () => {
      const r = await api.call('GET', `/v1/generations/${id}`, { key });
      return r.json.status !== 'queued' && r.json;
    },
    { timeoutMs },
  );

describe('the worker', () => {
  it('claims once per render, and starts an account held by its limit when its render ends', async () => {
    const a = await api.account(100_000);
    const worker = svc.running.worker!;
    const claims0 = worker.claims;
    const t0 = Date.now();
    const renders = 12;
    for (let i = 0; i < renders; i++) {
      const g = await finished(a.key, await create(a.key));
      expect(g.status).toBe('succeeded');
    }
    // The worker also claims once per second by itself (its poll); a claim at the end of each render
    // as well would make it about two per render.
    const polls = Math.ceil((Date.now() - t0) / 1000) + 1;
    expect(worker.claims - claims0).toBeLessThanOrEqual(renders + polls + 2);

    // Six at once for an account limited to two running renders: each end makes room for the next.
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await create(a.key));
    for (const id of ids) expect((await finished(a.key, id)).status).toBe('succeeded');
  });

  it('wakes no other worker for a render its own claim took (job-wake.ts)', async () => {
    const a = await api.account(100_000);
    const other = new pg.Client({ connectionString: dbh.url });
    await other.connect();
    const heard: string[] = [];
    other.on('notification', (n) => heard.push(n.payload ?? ''));
    await other.query(`LISTEN ${JOBS_CHANNEL}`);
    try {
      // Each create finds the worker idle: its claim takes the render, no NOTIFY is sent for it.
      for (let i = 0; i < 3; i++) {
        expect((await finished(a.key, await create(a.key), 15_000)).status).toBe('succeeded');
      }
      // Committed after any NOTIFY those creates could have sent: everything before it is heard.
      await other.query(`NOTIFY ${JOBS_CHANNEL}, 'mark'`);
      await waitFor('the mark', () => heard.includes('mark'), { timeoutMs: 15_000 });
      expect(heard.filter((p) => p.startsWith('created:'))).toEqual([]);
    } finally {
      await other.end();
    }
  });
});
