// Test keys (docs/api.md "Test keys"): cancel and DELETE of a test render while it is queued. A test
// render is usually created final (migrations/019); this service holds every test render before it is
// recorded (the beforeTestRender hook), so each one stays queued until released and takes the path a
// render takes when its result is not at hand at its create. No worker runs here.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { waitFor } from '../../helpers/wait.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let api: ReturnType<typeof client>;
/** Test renders waiting before being recorded, until released. */
const held = new Map<string, () => void>();

beforeAll(async () => {
  dbh = await freshDatabase();
  svc = await startTestService(dbh.url, {
    env: { RENDERGATE_WORKER_CONCURRENCY: '0' },
    beforeTestRender: (id) => new Promise<void>((r) => held.set(id, r)),
  });
  api = client(svc.base);
});
afterAll(async () => {
  for (const r of held.values()) r();
  await svc?.stop();
  await dbh?.drop();
});

const q = async (sql: string, values: unknown[] = []) => (await dbh.db.query(sql, values)).rows;
const i2v = {
  modelId: 'rendergate/image-to-video',
  inputs: { prompt: 'a harbour', image: 'http://127.0.0.1:9/x.png' },
};
let n = 0;
const create = (key: string) =>
  api.call('POST', '/v1/generations', {
    key,
    body: i2v,
    headers: { 'idempotency-key': `h-${++n}` },
  });

async function testKey() {
  const a = await api.account(0);
  return (await api.admin('POST', `/accounts/${a.accountId}/keys`, { mode: 'test' })).key as string;
}

/** True once no file of generation `id` is kept, on its row or in the store. */
const noFile = async (id: string) =>
  (await q('SELECT content_key FROM generations WHERE id = $1', [id]))[0].content_key === null &&
  !(await fs.promises.readdir(path.join(svc.dataDir, 'files', 'generations')).catch(() => [])).some(
    (f) => f.startsWith(id),
  );

describe('a queued test render', () => {
  it('is cancelled: refunded, its day given back, no file kept', async () => {
    const key = await testKey();
    const g = (await create(key)).json;
    await waitFor('the test render held', () => held.has(g.id));
    const c = await api.call('POST', `/v1/generations/${g.id}/cancel`, { key });
    expect(c.json).toMatchObject({
      status: 'refunded',
      error: { code: 'CANCELLED' },
      mode: 'test',
    });
    held.get(g.id)!();
    await waitFor('no file kept', () => noFile(g.id));
    expect((await api.call('GET', `/v1/generations/${g.id}`, { key })).json.status).toBe(
      'refunded',
    );
    expect((await api.call('GET', '/v1/me', { key })).json.key.spentTodayCents).toBe(0);
    await checkInvariants(dbh.db);
  });

  it('is deleted: gone, its day given back; released, it is not recorded', async () => {
    const key = await testKey();
    const g = (await create(key)).json;
    await waitFor('the test render held', () => held.has(g.id));
    const d = await api.call('DELETE', `/v1/generations/${g.id}`, { key });
    expect(d.json).toEqual({ id: g.id, deleted: true });
    held.get(g.id)!();
    await waitFor('no file kept', () => noFile(g.id));
    expect((await api.call('GET', `/v1/generations/${g.id}`, { key })).status).toBe(404);
    expect((await q('SELECT status FROM generations WHERE id = $1', [g.id]))[0].status).toBe(
      'refunded',
    );
    expect((await api.call('GET', '/v1/me', { key })).json.key.spentTodayCents).toBe(0);
    await checkInvariants(dbh.db);
  });
});
