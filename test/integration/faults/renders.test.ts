// Faults inside a render: storage that cannot be written, and the renderer's ffmpeg killed. Each ends
// failed and refunded, the service stays up, and the money invariants hold.
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { imageServer } from '../../helpers/images.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let api: ReturnType<typeof client>;
let img: Awaited<ReturnType<typeof imageServer>>;

beforeAll(async () => {
  dbh = await freshDatabase();
  svc = await startTestService(dbh.url);
  api = client(svc.base);
  img = await imageServer();
});
afterAll(async () => { await img?.close(); await svc?.stop(); await dbh?.drop(); });

async function final(key: string, id: string) {
  for (const until = Date.now() + 90_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    const g = (await api.call('GET', `/v1/generations/${id}`, { key })).json;
    if (g.status !== 'queued') return g;
  }
  throw new Error(`${id} still queued`);
}

const video = (key: string, inputs: object = {}) => api.call('POST', '/v1/generations', {
  key, body: { modelId: 'rendergate/image-to-video', inputs: { prompt: 'a slow push-in', image: img.url('/a.png'), ...inputs } },
  headers: { 'idempotency-key': crypto.randomUUID() },
});

it('storage that cannot be written fails the render and refunds it; the service stays up', async () => {
  const a = await api.account(10_000);
  const tmp = path.join(svc.dataDir, 'files', '.tmp');
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.writeFileSync(tmp, 'not a directory'); // as root, permissions cannot stop a write; a file in the way can
  try {
    const r = await video(a.key);
    const g = await final(a.key, r.json.id);
    expect(g.status).toBe('failed');
    expect(g.error.code).toBe('STORAGE_FAILED');
    expect(g.refundedCents).toBe(g.costCents);
    const ready = await api.call('GET', '/readyz');
    expect([ready.status, ready.json.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
  } finally {
    fs.rmSync(tmp, { force: true });
    fs.mkdirSync(tmp);
  }
  expect((await api.call('GET', '/readyz')).status).toBe(200);
  const ok = await video(a.key);
  expect((await final(a.key, ok.json.id)).status).toBe('succeeded');
  expect((await api.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(10_000 - ok.json.costCents);
  await checkInvariants(dbh.db);
});

it('ffmpeg killed mid-render: failed and refunded', async () => {
  const a = await api.account(10_000);
  const r = await video(a.key, { duration: 10 });
  const id = r.json.id as string;
  let killed = false;
  for (const until = Date.now() + 30_000; !killed && Date.now() < until; await new Promise((s) => setTimeout(s, 20))) {
    let pids: string[] = [];
    try { pids = execFileSync('pgrep', ['-f', `rendergate-${id}`]).toString().trim().split('\n').filter(Boolean); } catch { /* none yet */ }
    for (const pid of pids) {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmd.includes('ffmpeg')) { process.kill(Number(pid), 'SIGKILL'); killed = true; }
    }
  }
  expect(killed).toBe(true);
  const g = await final(a.key, id);
  expect(g.status).toBe('failed');
  expect(g.refundedCents).toBe(g.costCents);
  expect(typeof g.error.message).toBe('string');
  expect((await api.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(10_000);
  await checkInvariants(dbh.db);
});
