// The text output cap (docs/api.md "Abuse limits", RENDERGATE_TEXT_OUTPUT_LIMIT_BYTES, default 1 MiB)
// against a real Cog-protocol fake (test/fakes/cog.ts) answering a 60 MB `output` string. The service
// runs as its own process, so its memory is its own: its peak resident set (VmHWM) must not grow by the
// answer's size, the render fails OUTPUT_TOO_LARGE and is refunded, and another account's /v1/me is
// answered while the prediction is in flight.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cogFake, type CogFake } from '../fakes/cog.ts';
import { freshDatabase } from '../helpers/db.ts';
import { ADMIN, client } from '../helpers/service.ts';
import { spawnService, type Spawned } from '../helpers/spawned.ts';
import { waitFor } from '../helpers/wait.ts';

let cog: CogFake;
let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: Spawned;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-textcap-'));

beforeAll(async () => {
  cog = await cogFake({ delayMs: 300 });
  const model = {
    id: 't/cog-text',
    name: 'Cog text',
    kind: 'text',
    description: 'A remote text model.',
    output: { type: 'text' },
    fields: [{ name: 'text', type: 'text', required: true, maxLength: 2000 }],
    price: '3',
    backend: { driver: 'cog', url: cog.base },
    openai: { input: 'text' },
    timeLimitSeconds: 60,
    maxAttempts: 1,
  };
  fs.writeFileSync(path.join(dir, 'catalog.yaml'), stringify({ models: [model] }));
  dbh = await freshDatabase();
  svc = await spawnService({
    DATABASE_URL: dbh.url,
    RENDERGATE_DATA_DIR: path.join(dir, 'data'),
    RENDERGATE_ADMIN_TOKEN: ADMIN,
    RENDERGATE_CATALOG: path.join(dir, 'catalog.yaml'),
    RENDERGATE_ALLOW_PRIVATE_URLS: '1',
    LOG_LEVEL: 'warn',
  });
}, 90_000);
afterAll(async () => {
  if (svc?.proc.exitCode === null) {
    svc.proc.kill('SIGTERM');
    await svc.exited;
  }
  await cog?.close();
  await dbh?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const status = (pid: number, field: string) => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(
    fs.readFileSync(`/proc/${pid}/status`, 'utf8'),
  );
  return Number(m![1]) * 1024;
};

it('a 60 MB Cog text output fails OUTPUT_TOO_LARGE, refunded, unread; another account is served meanwhile', async () => {
  const api = client(svc.base);
  const a = await api.account(100_000);
  const b = await api.account(0);
  const small = await api.call('POST', '/v1/generations', {
    key: a.key,
    body: { modelId: 't/cog-text', inputs: { text: 'warm' } },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  cog.textOutput = ['ok'];
  expect((await api.waitFinal(a.key, small.json.id)).status).toBe('succeeded');
  const peakBefore = status(svc.proc.pid!, 'VmHWM');

  cog.textOutput = ['x'.repeat(60_000_000)];
  const g = await api.call('POST', '/v1/generations', {
    key: a.key,
    body: { modelId: 't/cog-text', inputs: { text: 'huge' } },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(g.status).toBe(202);
  // B asks who it is while A's prediction is in flight at the fake (which sleeps delayMs, then sends)
  await waitFor('the prediction at the fake', () =>
    cog.predictions.some((p) => p.id.startsWith(g.json.id)),
  );
  let answeredInFlight = 0; // answers between the prediction's arrival and the render's end
  const done = api.waitFinal(a.key, g.json.id, 60_000);
  let final: any = null;
  void done.then((x) => {
    final = x;
  });
  const meStatuses = new Set<number>();
  // B's requests, one every 10 ms or so, until A's render is final.
  await waitFor(
    "A's render final",
    async () => {
      meStatuses.add((await api.call('GET', '/v1/me', { key: b.key })).status);
      answeredInFlight++;
      return final !== null;
    },
    { intervalMs: 10 },
  );
  expect([...meStatuses]).toEqual([200]);
  const end = await done;
  expect(answeredInFlight).toBeGreaterThan(0);
  expect([end.status, end.error.code, end.refundedCents]).toEqual([
    'failed',
    'OUTPUT_TOO_LARGE',
    g.json.costCents,
  ]);
  expect(end.textOutput ?? null).toBeNull();
  const grown = status(svc.proc.pid!, 'VmHWM') - peakBefore;
  console.log(
    `peak RSS grew by ${(grown / 1e6).toFixed(1)} MB for a 60 MB answer; /v1/me answered ${answeredInFlight} times meanwhile`,
  );
  expect(grown).toBeLessThan(40_000_000); // the answer was never held: less than its size, not hundreds of MB
  // a text just over the limit inside a small answer is refused too (counted in bytes, after parsing)
  cog.textOutput = ['é'.repeat(600_000)]; // 1.2 MB of UTF-8 in 600,000 characters
  const over = await api.call('POST', '/v1/generations', {
    key: a.key,
    body: { modelId: 't/cog-text', inputs: { text: 'over' } },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  const overEnd = await api.waitFinal(a.key, over.json.id, 60_000);
  expect([overEnd.status, overEnd.error.code]).toEqual(['failed', 'OUTPUT_TOO_LARGE']);
}, 120_000);
