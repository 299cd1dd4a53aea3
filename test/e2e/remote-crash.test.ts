// A worker SIGKILLed in the middle of a Cog render: the synchronous prediction's connection closes
// (Cog cancels it), and once the lease lapses the restarted service runs the render again as a new
// prediction, named by its new attempt. One charge, no refund, the file served byte for byte.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createPool } from '../../src/db/pool.ts';
import { checkInvariants } from '../helpers/invariants.ts';
import { ADMIN, client } from '../helpers/service.ts';
import { embeddedUrl, spawnService, type Spawned } from '../helpers/spawned.ts';
import { cogFake } from '../fakes/cog.ts';
import { waitFor } from '../helpers/wait.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-remote-crash-'));
fs.chmodSync(dir, 0o755);
const dataDir = path.join(dir, 'data');
let current: Spawned | null = null;

afterAll(async () => {
  if (current && current.proc.exitCode === null) {
    current.proc.kill('SIGTERM');
    await current.exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

it('SIGKILL during a Cog prediction: re-run as a new prediction after restart, charged once', async () => {
  const cog = await cogFake();
  try {
    fs.writeFileSync(
      path.join(dir, 'catalog.yaml'),
      stringify({
        models: [
          {
            id: 't/cog',
            name: 'Cog',
            kind: 'video',
            description: 'A Cog model.',
            output: { type: 'file', contentType: 'video/mp4' },
            fields: [{ name: 'prompt', type: 'text', required: true }],
            price: '25',
            backend: { driver: 'cog', url: cog.base },
            timeLimitSeconds: 60,
            maxAttempts: 3,
          },
        ],
      }),
    );
    const env = {
      RENDERGATE_DATA_DIR: dataDir,
      RENDERGATE_ADMIN_TOKEN: ADMIN,
      RENDERGATE_CATALOG: path.join(dir, 'catalog.yaml'),
      RENDERGATE_BACKEND_HEALTH_SECONDS: '1',
    };
    current = await spawnService(env);
    const api = client(current.base);
    const a = await api.account(1_000);
    cog.script.push({ kind: 'hang' });
    const r = await api.call('POST', '/v1/generations', {
      key: a.key,
      body: { modelId: 't/cog', inputs: { prompt: 'crash' } },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    const id = r.json.id as string;
    await waitFor('the first prediction', () => cog.predictions.some((p) => p.id === `${id}-1`), {
      timeoutMs: 30_000,
    });
    current.proc.kill('SIGKILL');
    await current.exited;
    // The connection of the synchronous prediction closed with the process: Cog cancels it.
    await waitFor('the disconnect', () => cog.disconnected.includes(`${id}-1`), {
      timeoutMs: 10_000,
    });

    current = await spawnService(env);
    const api2 = client(current.base);
    const g = await api2.waitFinal(a.key, id, 90_000);
    expect(g.status).toBe('succeeded');
    expect(cog.predictions.map((p) => p.id).filter((p) => p.startsWith(id))).toEqual([
      `${id}-1`,
      `${id}-2`,
    ]);
    const res = await fetch(`${current.base}/v1/generations/${id}/content`, {
      headers: { authorization: `Bearer ${a.key}` },
    });
    expect(Buffer.compare(Buffer.from(await res.arrayBuffer()), cog.output)).toBe(0);
    const db = createPool(embeddedUrl(dataDir), 2);
    try {
      const { rows } = await db.query('SELECT kind FROM ledger_entries WHERE generation_id = $1', [
        id,
      ]);
      expect(rows.map((x) => x.kind)).toEqual(['charge']);
      await checkInvariants(db);
    } finally {
      await db.end();
    }
  } finally {
    await cog.close();
  }
}, 180_000);
