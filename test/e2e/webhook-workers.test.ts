// Webhook delivery across two worker processes on one database: every event arrives, no attempt of one
// delivery is ever in flight twice at once, and a worker SIGKILLed while it holds a delivery (after the
// status change, before the receiver accepted it) loses nothing: the other worker sends it once its
// lease lapses, with the same webhook-id.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/db.ts';
import { ADMIN, client, startTestService, type TestService } from '../helpers/service.ts';
import { spawnService, type Spawned } from '../helpers/spawned.ts';
import { webhookReceiver } from '../helpers/webhook-receiver.ts';
import { checkInvariants } from '../helpers/invariants.ts';
import { waitFor } from '../helpers/wait.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let api: TestService;
let rx: Awaited<ReturnType<typeof webhookReceiver>>;
const workers: Spawned[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  dbh = await freshDatabase();
  api = await startTestService(dbh.url, { role: 'api' });
  rx = await webhookReceiver();
  for (let i = 0; i < 2; i++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-whw-'));
    dirs.push(dir);
    workers.push(
      await spawnService(
        {
          DATABASE_URL: dbh.url,
          RENDERGATE_DATA_DIR: dir,
          RENDERGATE_ADMIN_TOKEN: ADMIN,
          RENDERGATE_PUBLIC_URL: api.base,
          RENDERGATE_ALLOW_PRIVATE_URLS: '1',
          RENDERGATE_WEBHOOK_RETRY_SECONDS: '1,1,1',
          RENDERGATE_WORKER_CONCURRENCY: '2',
          LOG_LEVEL: 'warn',
        },
        ['worker'],
      ),
    );
  }
}, 120_000);

afterAll(async () => {
  for (const w of workers)
    if (w.proc.exitCode === null && w.proc.signalCode === null) {
      w.proc.kill('SIGTERM');
      await w.exited;
    }
  await rx?.close();
  await api?.stop();
  await dbh?.drop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

it("two workers deliver every event, never one attempt twice at once; a SIGKILLed worker's delivery is sent by the other", async () => {
  const c = client(api.base);
  const a = await c.account(1_000_000, { rateLimitPerMinute: 100_000 });
  const ok = (
    await c.call('POST', '/v1/webhook-endpoints', { key: a.key, body: { url: rx.url('/ok') } })
  ).json;
  rx.secret('/ok', ok.secret);
  const create = (i: number) =>
    c.call('POST', '/v1/generations', {
      key: a.key,
      body: {
        modelId: 'rendergate/shot-list',
        inputs: { text: `Take ${i}. The tide turns. A gull lands.` },
      },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
  const ids = (await Promise.all(Array.from({ length: 20 }, (_, i) => create(i)))).map(
    (r) => r.json.id as string,
  );
  await waitFor(
    'the webhooks',
    () =>
      ids.every((id) =>
        ['generation.started', 'generation.succeeded'].every((t) =>
          rx.received.some((x) => x.body.data.id === id && x.body.type === t),
        ),
      ),
    { timeoutMs: 90_000 },
  );
  expect(rx.received.every((x) => x.verified)).toBe(true);
  expect(rx.maxConcurrentPerId()).toBe(1);
  const { rows: per } = await dbh.db.query(
    `SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 'delivered')::int AS delivered FROM webhook_deliveries WHERE endpoint_id = $1`,
    [ok.id],
  );
  expect(per[0]).toEqual({ n: 40, delivered: expect.any(Number) });

  // A delivery held open by the receiver; the worker holding it is killed without warning.
  const hang = (
    await c.call('POST', '/v1/webhook-endpoints', {
      key: a.key,
      body: { url: rx.url('/hang-first'), events: ['generation.succeeded'] },
    })
  ).json;
  rx.secret('/hang-first', hang.secret);
  const g = (await create(99)).json.id as string;
  await waitFor('the webhooks', () =>
    rx.received.some((x) => x.path === '/hang-first' && x.body.data.id === g),
  );
  const {
    rows: [held],
  } = await dbh.db.query(`SELECT id, lease_owner FROM webhook_deliveries WHERE endpoint_id = $1`, [
    hang.id,
  ]);
  const pid = Number(String(held.lease_owner).split(':')[1]);
  const victim = workers.find((w) => w.proc.pid === pid)!;
  expect(victim).toBeDefined();
  victim.proc.kill('SIGKILL');
  await victim.exited;
  await waitFor(
    'the webhooks',
    () => rx.received.filter((x) => x.path === '/hang-first').length === 2,
    { timeoutMs: 90_000 },
  );
  const [first, second] = rx.received.filter((x) => x.path === '/hang-first');
  expect([first.id, second.id]).toEqual([held.id, held.id]);
  expect(second.verified).toBe(true);
  const d = await waitFor(
    'the delivery recorded',
    async () => {
      const {
        rows: [x],
      } = await dbh.db.query('SELECT status, attempts FROM webhook_deliveries WHERE id = $1', [
        held.id,
      ]);
      return x.status === 'delivered' && x;
    },
    { intervalMs: 100 },
  );
  expect(d.attempts).toBe(1); // the killed worker's attempt was never recorded: the survivor's is the first
  expect(rx.maxConcurrentPerId()).toBe(1);
  await checkInvariants(dbh.db);
}, 240_000);
