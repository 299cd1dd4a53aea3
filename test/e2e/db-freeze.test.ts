// A frozen database (docs/api.md "Abuse limits", "Faults"): every PostgreSQL process of the test's own
// embedded server is stopped with SIGSTOP, so connections stay open and nothing answers. Every request
// that needs the database answers 503 with Retry-After within 3 s, the first one included (an idle
// pooled connection to the frozen server used to wait 20 s); after SIGCONT the service serves again.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.ts';
import { client, freePort, startTestService, type TestService } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-dbfreeze-'));
fs.chmodSync(dir, 0o755);
let pg: EmbeddedPostgres;
let svc: TestService;
let frozen: number[] = [];

beforeAll(async () => {
  pg = await startEmbeddedPostgres(path.join(dir, 'data'), () => {}, await freePort());
  svc = await startTestService(pg.url);
}, 90_000);
afterAll(async () => {
  for (const pid of frozen)
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      /* gone */
    }
  await svc?.stop();
  await pg?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The postmaster and every process it started (its backends and helpers). */
function postgresProcesses(): number[] {
  const master = Number(
    fs.readFileSync(path.join(dir, 'data', 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  const children = fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === master;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [master, ...children];
}

it('every request that needs the frozen database answers 503 with Retry-After within 3 s, the first one too', async () => {
  const api = client(svc.base);
  const a = await api.account(100_000);
  const create = () =>
    api.call('POST', '/v1/generations', {
      key: a.key,
      body: { modelId: 'rendergate/shot-list', inputs: { text: 'A gull lands.' } },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
  const g = await create();
  expect(g.status).toBe(202);
  await api.waitFinal(a.key, g.json.id);
  // warm: the pool holds idle connections, which is what made the first request wait
  await Promise.all(
    Array.from({ length: 8 }, () => api.call('GET', '/v1/generations', { key: a.key })),
  );

  frozen = postgresProcesses();
  for (const pid of frozen) process.kill(pid, 'SIGSTOP');
  const times: number[] = [];
  for (const send of [
    create,
    () => api.call('GET', '/v1/me', { key: a.key }),
    () => api.call('GET', '/v1/generations', { key: a.key }),
    create,
  ]) {
    const t0 = Date.now();
    const r = await send();
    times.push(Date.now() - t0);
    expect([r.status, r.json?.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  }
  console.log(`answers while frozen (ms): ${times.join(', ')}`);
  expect(Math.max(...times)).toBeLessThan(3_000);

  for (const pid of frozen) process.kill(pid, 'SIGCONT');
  frozen = [];
  await waitFor(
    'serving again',
    async () => {
      const r = await create();
      expect(r.status, r.text).toBe(202);
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
}, 120_000);
