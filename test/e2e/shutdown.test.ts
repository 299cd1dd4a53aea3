// SIGTERM: the service stops accepting, finishes in-flight work, lets a render that finishes within the
// grace period complete, hands one that does not back to the queue, and stops the embedded database
// cleanly. The next start runs the handed-back render.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { imageServer } from '../helpers/images.ts';
import { ADMIN, client } from '../helpers/service.ts';
import { spawnService, type Spawned } from '../helpers/spawned.ts';
import { waitFor } from '../helpers/wait.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-term-'));
fs.chmodSync(dir, 0o755);
const dataDir = path.join(dir, 'data');
const env = {
  RENDERGATE_DATA_DIR: dataDir,
  RENDERGATE_ADMIN_TOKEN: ADMIN,
  RENDERGATE_ALLOW_PRIVATE_URLS: '1',
  RENDERGATE_SHUTDOWN_GRACE_SECONDS: '15',
};
let current: Spawned | null = null;

afterAll(async () => {
  if (current && current.proc.exitCode === null) {
    current.proc.kill('SIGKILL');
    await current.exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

it('SIGTERM drains: in-grace render completes, the other is handed back and runs after restart', async () => {
  const img = await imageServer();
  try {
    current = await spawnService(env);
    const api = client(current.base);
    const a = await api.account(10_000);
    const create = (p: string) =>
      api.call('POST', '/v1/generations', {
        key: a.key,
        body: { modelId: 'rendergate/image-to-video', inputs: { prompt: 'p', image: img.url(p) } },
        headers: { 'idempotency-key': crypto.randomUUID() },
      });
    const quick = (await create('/held/quick.png')).json.id;
    const slow = (await create('/held/slow.png')).json.id;
    await waitFor(
      'both renders fetching their image',
      () => img.hits['/held/quick.png'] && img.hits['/held/slow.png'],
      { intervalMs: 50 },
    );
    const t0 = Date.now();
    current.proc.kill('SIGTERM');
    // no longer accepting connections, while the quick render (still held) keeps the process alive
    const { base } = current;
    await waitFor('the listener closed', () =>
      fetch(`${base}/healthz`).then(
        () => false,
        () => true,
      ),
    );
    expect(current.proc.exitCode).toBeNull();
    img.release('/held/quick.png');
    expect(await current.exited).toBe(0);
    // The slow render is held until after the restart: without the hand-back the process would never
    // exit. The bound is against that, not the machine's speed (the grace period alone is 15 s).
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(fs.existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    const pgLog = fs.readFileSync(path.join(dataDir, 'postgres', 'server.log'), 'utf8');
    expect(pgLog).toMatch(/database system is shut down/);

    current = await spawnService(env);
    const api2 = client(current.base);
    expect(fs.readFileSync(path.join(dataDir, 'postgres', 'server.log'), 'utf8')).not.toMatch(
      /not properly shut down/,
    );
    img.release('/held/slow.png');
    // a generous overall wait: a render on a machine busy with the suite's other files can take a while
    const status = (id: string) => api2.waitFinal(a.key, id, 120_000);
    const q = await status(quick);
    expect(q.status).toBe('succeeded');
    expect(new Date(q.completedAt).getTime()).toBeLessThan(Date.now() - 500); // finished before the restart
    expect((await status(slow)).status).toBe('succeeded');
    current.proc.kill('SIGTERM');
    expect(await current.exited).toBe(0);
  } finally {
    await img.close();
  }
}, 360_000);
