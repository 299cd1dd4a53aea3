// The build output is complete: `npm run build`, then `node dist/main.js serve` with no TypeScript
// loader (as the container image runs it) starts on a fresh data dir and renders text (the worker
// thread's entry) and video (ffmpeg), and the studio serves its assets.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { imageServer } from '../helpers/images.ts';
import { ADMIN, client } from '../helpers/service.ts';
import { spawnService, type Spawned } from '../helpers/spawned.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-build-'));
fs.chmodSync(dir, 0o755);
let svc: Spawned | null = null;

afterAll(async () => {
  if (svc && svc.proc.exitCode === null) {
    svc.proc.kill('SIGTERM');
    await svc.exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

it('node dist/main.js serve renders text and video', { timeout: 400_000 }, async () => {
  await promisify(execFile)(process.execPath, ['scripts/build.mjs'], {
    cwd: ROOT,
    timeout: 300_000,
  });
  for (const f of [
    'main.js',
    'backends/local/text-worker.mjs',
    'studio/assets/studio.css',
    'studio/views/layout.eta',
  ]) {
    expect(fs.existsSync(path.join(ROOT, 'dist', f)), f).toBe(true);
  }
  const img = await imageServer();
  try {
    svc = await spawnService(
      {
        RENDERGATE_DATA_DIR: path.join(dir, 'data'),
        RENDERGATE_ADMIN_TOKEN: ADMIN,
        RENDERGATE_ALLOW_PRIVATE_URLS: '1',
      },
      ['serve'],
      ['dist/main.js'],
    );
    const api = client(svc.base);
    const a = await api.account(100_000);
    const create = (modelId: string, inputs: object) =>
      api.call('POST', '/v1/generations', {
        key: a.key,
        body: { modelId, inputs },
        headers: { 'idempotency-key': crypto.randomUUID() },
      });
    const text = await create('rendergate/shot-list', {
      text: 'A lighthouse at dusk. Waves below.',
    });
    const video = await create('rendergate/image-to-video', {
      prompt: 'slow push in',
      image: img.url('/a.png'),
    });
    const t = await api.waitFinal(a.key, text.json.id, 120_000);
    expect(t.status, JSON.stringify(t)).toBe('succeeded');
    expect(t.textOutput.length).toBeGreaterThan(10);
    const v = await api.waitFinal(a.key, video.json.id, 120_000);
    expect(v.status, JSON.stringify(v)).toBe('succeeded');
    const file = await fetch(`${svc.base}/v1/generations/${v.id}/content`, {
      headers: { authorization: `Bearer ${a.key}` },
    });
    expect(file.headers.get('content-type')).toBe('video/mp4');
    expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    expect((await fetch(`${svc.base}/assets/studio.css`)).status).toBe(200);
  } finally {
    await img.close();
  }
  expect(svc.output()).not.toMatch(/ERR_UNKNOWN_FILE_EXTENSION|Cannot find module/);
});
