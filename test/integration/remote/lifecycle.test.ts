// A render held back while its only server is down until the model's deadline fails and is refunded;
// a worker that shuts down tells Cog to cancel the prediction it hands back; upload inputs reach
// remote servers as bytes (a data URL for Cog, `/upload/image` for ComfyUI), never as our address.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../../src/config.ts';
import { createBackends } from '../../../src/backends/registry.ts';
import { loadCatalog } from '../../../src/backends/catalog.ts';
import { Metrics } from '../../../src/metrics/metrics.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService } from '../../helpers/service.ts';
import { cogFake, type CogFake } from '../../fakes/cog.ts';
import { comfyFake, type ComfyFake } from '../../fakes/comfyui.ts';
import { waitFor } from '../../helpers/wait.ts';
import { claimRoundPassed, videoModel, WITNESS_MODEL } from './harness.ts';
import { janitor } from '../../helpers/janitor.ts';

let cog: CogFake;
let comfy: ComfyFake;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-lifecycle-'));
beforeAll(async () => {
  cog = await cogFake();
  comfy = await comfyFake();
  fs.writeFileSync(
    path.join(dir, 'wf.json'),
    JSON.stringify({
      5: { class_type: 'LoadImage', inputs: { image: 'x.png' } },
      9: { class_type: 'SaveVideo', inputs: {} },
    }),
  );
  fs.writeFileSync(
    path.join(dir, 'catalog.yaml'),
    stringify({
      models: [
        {
          ...videoModel('t/cog', { driver: 'cog', url: cog.base }),
          fields: [
            { name: 'prompt', type: 'text', required: true },
            { name: 'image', type: 'url', media: 'image' },
          ],
          price: '10',
        },
        {
          ...videoModel('t/comfy', {
            driver: 'comfyui',
            url: comfy.base,
            workflow: 'wf.json',
            bindings: { '5.inputs.image': 'image' },
          }),
          fields: [{ name: 'image', type: 'url', media: 'image', required: true }],
          price: '10',
        },
        WITNESS_MODEL,
      ],
    }),
  );
});
afterAll(async () => {
  await cog.close();
  await comfy.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('held back while the server is down, until the deadline: failed and refunded, no attempt spent', async () => {
  const dbh = await freshDatabase();
  const svc = await startTestService(dbh.url, {
    env: {
      RENDERGATE_CATALOG: path.join(dir, 'catalog.yaml'),
      RENDERGATE_BACKEND_HEALTH_SECONDS: '1',
    },
  });
  try {
    cog.status = 'SETUP_FAILED';
    await waitFor(
      'down',
      async () =>
        (await (await fetch(`${svc.base}/readyz`)).json()).backends?.[0]?.healthy === false,
      { timeoutMs: 10_000 },
    );
    const api = client(svc.base);
    const a = await api.account(1_000);
    const r = await api.call('POST', '/v1/generations', {
      key: a.key,
      body: { modelId: 't/cog', inputs: { prompt: 'late' } },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    await claimRoundPassed(api, a.key); // the worker saw the render and held it back
    await dbh.db.query(
      `UPDATE generations SET deadline_at = now() - interval '1 second' WHERE id = $1`,
      [r.json.id],
    );
    await janitor(dbh.db, svc.running.infra.storage).sweep();
    const g = (await api.call('GET', `/v1/generations/${r.json.id}`, { key: a.key })).json;
    expect([g.status, g.error.code, g.refundedCents]).toEqual([
      'failed',
      'RENDER_DEADLINE_EXCEEDED',
      g.costCents,
    ]);
    expect(
      (await dbh.db.query('SELECT attempts FROM generations WHERE id = $1', [g.id])).rows[0]
        .attempts,
    ).toBe(0);
    expect(cog.predictions.some((p) => p.id.startsWith(g.id))).toBe(false);
  } finally {
    cog.status = 'READY';
    await svc.stop();
    await dbh.drop();
  }
});

it('a worker shutting down cancels its running Cog prediction and hands the render back', async () => {
  const dbh = await freshDatabase();
  const svc = await startTestService(dbh.url, {
    env: {
      RENDERGATE_CATALOG: path.join(dir, 'catalog.yaml'),
      RENDERGATE_BACKEND_HEALTH_SECONDS: '1',
    },
  });
  let stopped = false;
  try {
    const api = client(svc.base);
    const a = await api.account(1_000);
    cog.script.push({ kind: 'hang' });
    const r = await api.call('POST', '/v1/generations', {
      key: a.key,
      body: { modelId: 't/cog', inputs: { prompt: 'bye' } },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    await waitFor('the prediction', () => cog.predictions.some((p) => p.id === `${r.json.id}-1`), {
      timeoutMs: 20_000,
    });
    await svc.running.close(100);
    stopped = true;
    await waitFor('the cancel', () => cog.cancels.includes(`${r.json.id}-1`), {
      timeoutMs: 10_000,
    });
    const { rows } = await dbh.db.query(
      'SELECT status, attempts, lease_owner FROM generations WHERE id = $1',
      [r.json.id],
    );
    expect(rows[0]).toEqual({ status: 'queued', attempts: 0, lease_owner: null });
  } finally {
    if (!stopped) await svc.stop();
    await dbh.drop();
  }
});

it("sends an upload's bytes, not its address: a data URL to Cog, /upload/image to ComfyUI", async () => {
  const catalog = loadCatalog(path.join(dir, 'catalog.yaml'));
  const backends = createBackends(loadConfig({ RENDERGATE_DATA_DIR: dir }), catalog, new Metrics());
  const png = crypto.randomBytes(300);
  const ours = 'http://127.0.0.1:1/v1/uploads/upl_x';
  const ctx = (workDir: string) => ({
    signal: new AbortController().signal,
    progress: () => {},
    workDir,
    timeLimitSeconds: 30,
    attemptId: 'gen_up-1',
    readUpload: (u: string) =>
      Promise.resolve(u === ours ? { bytes: png, contentType: 'image/png' } : null),
  });
  await backends
    .backendFor({ id: 't/cog' } as never)
    .run({ prompt: 'p', image: ours }, ctx(fs.mkdtempSync(path.join(dir, 'w-'))));
  expect(cog.predictions.at(-1)!.input.image).toBe(
    `data:image/png;base64,${png.toString('base64')}`,
  );
  await backends
    .backendFor({ id: 't/comfy' } as never)
    .run({ image: ours }, ctx(fs.mkdtempSync(path.join(dir, 'w-'))));
  expect(comfy.uploads.at(-1)!.name).toBe('rendergate-gen_up-1.png');
  expect(comfy.prompts.at(-1)!.graph[5].inputs.image).toBe('rendergate-gen_up-1.png');
});
