// Fencing of render attempts (db/lease.ts). Two worker processes share one database and one storage;
// the first is cut off from the database mid-render (a TCP proxy holds its traffic) past its lease,
// the second claims the render again and finishes it; then the first wakes and finishes its stale
// attempt. Whatever it does after waking, the succeeded generation, its file and its charge stand.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ModelBackend } from '../../../src/backends/types.ts';
import { freshDatabase, overTcp } from '../../helpers/db.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { holdingProxy, type HoldingProxy } from '../../helpers/tcp-proxy.ts';
import { waitFor } from '../../helpers/wait.ts';

const CATALOG = `
models:
  - id: test/gate
    name: Gate
    kind: video
    description: A render the test holds open.
    output: { type: file, contentType: video/mp4 }
    fields:
      - { name: prompt, type: text, required: true, maxLength: 100 }
    price: "7"
    backend: { driver: local, renderer: gate }
    timeLimitSeconds: 120
    maxAttempts: 3
`;

/** A backend whose renders write `bytes` and return once `open` resolves. */
function gate(bytes: string, open: Promise<void>, started?: () => void): ModelBackend {
  return {
    run: async (_inputs, ctx) => {
      started?.();
      await open;
      const file = path.join(ctx.workDir, 'out.mp4');
      fs.writeFileSync(file, bytes);
      return { kind: 'file', path: file, contentType: 'video/mp4' };
    },
  };
}

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let proxy: HoldingProxy;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-fence-'));
const services: TestService[] = [];

beforeAll(async () => {
  dbh = await freshDatabase();
  const u = overTcp(dbh.url);
  proxy = await holdingProxy(Number(u.port), u.hostname);
  fs.writeFileSync(path.join(dataDir, 'catalog.yaml'), CATALOG);
});
afterAll(async () => {
  proxy.release();
  for (const s of services.reverse()) await s.stop();
  await proxy.close();
  await dbh.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('a stale attempt that wakes after another finished the render never touches its file or its money', async () => {
  const env = { RENDERGATE_CATALOG: path.join(dataDir, 'catalog.yaml') };
  const api = await startTestService(dbh.url, {
    role: 'api',
    env,
    dataDir,
    extraBackends: { gate: gate('', Promise.resolve()) },
  });
  services.push(api);
  const c = client(api.base);
  const a = await c.account(1_000);

  // Worker A reaches the database only through the proxy; its render waits for the test.
  let openA!: () => void;
  let startedA = false;
  const proxied = overTcp(dbh.url);
  proxied.port = String(proxy.port);
  const workerA = await startTestService(proxied.href, {
    role: 'worker',
    env,
    dataDir,
    extraBackends: {
      gate: gate(
        'stale attempt',
        new Promise((r) => {
          openA = r;
        }),
        () => {
          startedA = true;
        },
      ),
    },
  });
  services.push(workerA);

  const created = await c.call('POST', '/v1/generations', {
    key: a.key,
    body: { modelId: 'test/gate', inputs: { prompt: 'p' } },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(created.status).toBe(202);
  const id = created.json.id as string;
  await waitFor('worker A to start the render', () => startedA);

  // A is cut off; its lease is made to lapse (what 15 s without heartbeats would do).
  proxy.hold();
  await dbh.db.query(
    `UPDATE generations SET lease_until = now() - interval '1 second' WHERE id = $1`,
    [id],
  );

  // Worker B claims the render again (attempt 2) and finishes it.
  const workerB = await startTestService(dbh.url, {
    role: 'worker',
    env,
    dataDir,
    extraBackends: { gate: gate('winning attempt', Promise.resolve()) },
  });
  services.push(workerB);
  const done = await c.waitFinal(a.key, id);
  expect(done.status).toBe('succeeded');
  const {
    rows: [row],
  } = await dbh.db.query('SELECT attempts FROM generations WHERE id = $1', [id]);
  expect(row.attempts).toBe(2);

  // A's stale attempt finishes and stores its output while still cut off, then reaches the database.
  openA();
  const generationsDir = path.join(dataDir, 'files', 'generations');
  const holds = (text: string) =>
    fs
      .readdirSync(generationsDir)
      .some((f) => fs.readFileSync(path.join(generationsDir, f), 'utf8') === text);
  await waitFor('the stale attempt to store its output', () => holds('stale attempt'));
  proxy.release();
  await waitFor(
    'worker A to finish its stale attempt',
    () => workerA.running.worker!.attemptsRunning === 0,
  );

  // The winner's file is served; the stale attempt removed only its own; charged once.
  const content = await c.call('GET', `/v1/generations/${id}/content`, { key: a.key });
  expect(content.status).toBe(200);
  expect(content.text).toBe('winning attempt');
  expect(holds('stale attempt')).toBe(false);
  const after = await c.call('GET', `/v1/generations/${id}`, { key: a.key });
  expect([after.json.status, after.json.refundedCents]).toEqual(['succeeded', 0]);
  expect((await c.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(1_000 - 7);
  await checkInvariants(dbh.db);
});

it('a retried render removes the file an earlier attempt stored and never recorded', async () => {
  const env = { RENDERGATE_CATALOG: path.join(dataDir, 'catalog.yaml') };
  const api = await startTestService(dbh.url, {
    role: 'api',
    env,
    dataDir,
    extraBackends: { gate: gate('', Promise.resolve()) },
  });
  services.push(api);
  const c = client(api.base);
  const a = await c.account(1_000);
  const created = await c.call('POST', '/v1/generations', {
    key: a.key,
    body: { modelId: 'test/gate', inputs: { prompt: 'orphan' } },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(created.status).toBe(202);
  const id = created.json.id as string;

  // What a worker killed between its upload and its UPDATE leaves: attempt 1 claimed, its lease lapsed,
  // its file stored under its own key and recorded nowhere.
  const generationsDir = path.join(dataDir, 'files', 'generations');
  fs.mkdirSync(generationsDir, { recursive: true });
  const orphan = path.join(generationsDir, `${id}-1.mp4`);
  fs.writeFileSync(orphan, 'killed attempt');
  await dbh.db.query(
    `UPDATE generations SET attempts = 1, lease_owner = 'killed-worker', lease_until = now() - interval '1 second' WHERE id = $1`,
    [id],
  );

  const worker = await startTestService(dbh.url, {
    role: 'worker',
    env,
    dataDir,
    extraBackends: { gate: gate('retried attempt', Promise.resolve()) },
  });
  services.push(worker);
  const done = await c.waitFinal(a.key, id);
  expect(done.status).toBe('succeeded');
  const {
    rows: [row],
  } = await dbh.db.query('SELECT attempts, content_key FROM generations WHERE id = $1', [id]);
  expect(row).toEqual({ attempts: 2, content_key: `generations/${id}-2.mp4` });
  // Rendered by whichever worker claimed it (the first test's two still run): not attempt 1's file.
  const content = await c.call('GET', `/v1/generations/${id}/content`, { key: a.key });
  expect(content.status).toBe(200);
  expect(content.text).not.toBe('killed attempt');
  expect(fs.existsSync(orphan)).toBe(false);
  expect(fs.readdirSync(generationsDir).filter((f) => f.startsWith(id))).toEqual([`${id}-2.mp4`]);
  await checkInvariants(dbh.db);
});
