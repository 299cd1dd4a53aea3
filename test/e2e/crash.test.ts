// The server killed with SIGKILL while renders are queued and running, then started again on the same
// data dir (the embedded PostgreSQL left running is adopted): every generation reaches a final status,
// nothing is charged twice or lost, and the money invariants hold.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.ts';
import { imageServer } from '../helpers/images.ts';
import { checkInvariants } from '../helpers/invariants.ts';
import { ADMIN, client } from '../helpers/service.ts';
import { embeddedUrl, spawnService, type Spawned } from '../helpers/spawned.ts';
import { waitFor } from '../helpers/wait.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-crash-'));
fs.chmodSync(dir, 0o755);
const dataDir = path.join(dir, 'data');
const env = {
  RENDERGATE_DATA_DIR: dataDir,
  RENDERGATE_ADMIN_TOKEN: ADMIN,
  RENDERGATE_ALLOW_PRIVATE_URLS: '1',
  RENDERGATE_WORKER_CONCURRENCY: '2',
};
let current: Spawned | null = null;

afterAll(async () => {
  if (current && current.proc.exitCode === null) {
    current.proc.kill('SIGTERM');
    await current.exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

it('SIGKILL mid-render, restart on the same data dir: every render ends, money intact', async () => {
  const img = await imageServer();
  try {
    current = await spawnService(env);
    const api = client(current.base);
    // polling 12 renders every 250 ms passes the default 600 requests a minute when the machine is busy
    const a = await api.account(1_000_000, { rateLimitPerMinute: 100_000 });
    const create = (modelId: string, inputs: object) =>
      api.call('POST', '/v1/generations', {
        key: a.key,
        body: { modelId, inputs },
        headers: { 'idempotency-key': crypto.randomUUID() },
      });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(
        (
          await create('rendergate/image-to-video', {
            prompt: `p${i}`,
            image: img.url(`/held/${i}.png`),
          })
        ).json.id,
      );
    for (let i = 0; i < 4; i++)
      ids.push(
        (await create('rendergate/image-to-video', { prompt: `q${i}`, image: img.url('/a.png') }))
          .json.id,
      );
    for (let i = 0; i < 4; i++)
      ids.push(
        (await create('rendergate/shot-list', { text: `Sentence ${i}. Another sentence here.` }))
          .json.id,
      );
    // wait until renders are running (held ones are mid-fetch), then kill without warning
    await waitFor(
      'two renders fetching their held image',
      () => (img.hits['/held/0.png'] ?? 0) + (img.hits['/held/1.png'] ?? 0) >= 2,
      { intervalMs: 50 },
    );
    current.proc.kill('SIGKILL');
    await current.exited;

    current = await spawnService(env);
    for (let i = 0; i < 4; i++) img.release(`/held/${i}.png`);
    const api2 = client(current.base);
    const final: Record<string, string> = {};
    await waitFor(
      'every render final',
      async () => {
        for (const id of ids) {
          if (final[id]) continue;
          const r = await api2.call('GET', `/v1/generations/${id}`, { key: a.key });
          if (r.json.status !== 'queued') final[id] = r.json.status;
        }
        return Object.keys(final).length === ids.length;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    expect(Object.values(final).every((s) => s === 'succeeded')).toBe(true);
    for (const id of ids.slice(0, 8)) {
      const f = await fetch(`${current.base}/v1/generations/${id}/content`, {
        headers: { authorization: `Bearer ${a.key}` },
      });
      expect(f.status).toBe(200);
      expect(
        Buffer.from(await f.arrayBuffer())
          .subarray(4, 8)
          .toString(),
      ).toBe('ftyp');
    }
    const db = createPool(embeddedUrl(dataDir), 2);
    try {
      await checkInvariants(db);
      const { rows } = await db.query('SELECT sum(cost_cents)::int AS spent FROM generations');
      expect((await api2.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(
        1_000_000 - rows[0].spent,
      );
    } finally {
      await db.end();
    }

    // a graceful stop also stops the adopted database
    current.proc.kill('SIGTERM');
    expect(await current.exited).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  } finally {
    await img.close();
  }
}, 240_000);
