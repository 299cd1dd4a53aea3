// Backup and restore as an operator runs them: `rendergate backup` against a running service under a
// load of creates, renders and deletes; `rendergate restore` into a new data dir. The restore must be
// one consistent moment: every balance equals its ledger, every generation the service had before the
// backup began is there, every stored file a generation names is there with its bytes, and the
// service starts on it and serves them.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as tar from 'tar';
import { afterAll, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { createPool } from '../../src/db/pool.ts';
import { checkInvariants } from '../helpers/invariants.ts';
import { imageServer } from '../helpers/images.ts';
import { ADMIN, client } from '../helpers/service.ts';
import { spawnService, type Spawned } from '../helpers/spawned.ts';
import { waitFor } from '../helpers/wait.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-backup-'));
fs.chmodSync(dir, 0o755);
const env = {
  RENDERGATE_ADMIN_TOKEN: ADMIN,
  RENDERGATE_ALLOW_PRIVATE_URLS: '1',
  LOG_LEVEL: 'warn',
  RENDERGATE_SHUTDOWN_GRACE_SECONDS: '1',
};
const spawned: Spawned[] = [];

afterAll(async () => {
  for (const s of spawned)
    if (s.proc.exitCode === null) {
      s.proc.kill('SIGKILL');
      await s.exited;
    }
  fs.rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[], dataDir: string) {
  return run(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, RENDERGATE_DATA_DIR: dataDir, DATABASE_URL: '' },
  });
}

it('a backup taken under load restores into a new data dir that adds up and serves its files', async () => {
  const img = await imageServer();
  const source = path.join(dir, 'source');
  const restored = path.join(dir, 'restored');
  const archive = path.join(dir, 'backup.tar.gz');
  try {
    const svc = await spawnService({
      ...env,
      RENDERGATE_DATA_DIR: source,
      RENDERGATE_WORKER_CONCURRENCY: '2',
    });
    spawned.push(svc);
    const api = client(svc.base);
    const accounts = await Promise.all([1, 2, 3].map(() => api.account(100_000)));
    // Videos (files, ffmpeg) and text renders; the load makes one video in five so renders keep up.
    const create = (key: string, i: number, video: boolean) =>
      api.call('POST', '/v1/generations', {
        key,
        headers: { 'idempotency-key': crypto.randomUUID() },
        body: video
          ? {
              modelId: 'rendergate/image-to-video',
              inputs: { prompt: `p${i}`, image: img.url(i % 4 === 0 ? '/a.png' : '/b.png') },
            }
          : {
              modelId: 'rendergate/shot-list',
              inputs: { text: `Shot ${i}. A gull lands. The tide turns.` },
            },
      });
    // Finished renders with files before the backup; the doomed ones are deleted (their files purged) while it runs.
    const before: string[] = [];
    const doomed: { id: string; key: string }[] = [];
    for (let i = 0; i < 10; i++) {
      const id = (await create(accounts[i % 3].key, i, i % 3 !== 2)).json.id;
      await api.waitFinal(accounts[i % 3].key, id, 120_000);
      if (i < 6) before.push(id);
      else doomed.push({ id, key: accounts[i % 3].key });
    }

    // Load while the backup runs: creates, renders finishing, deletes purging files.
    let loading = true;
    let n = 100;
    const load = (async () => {
      while (loading) {
        const a = accounts[n % 3];
        const r = await create(a.key, n, n++ % 5 === 0);
        expect(r.status).toBe(202);
        const d = n % 3 === 0 ? doomed.pop() : undefined;
        if (d)
          expect((await api.call('DELETE', `/v1/generations/${d.id}`, { key: d.key })).status).toBe(
            200,
          );
        await new Promise((res) => setTimeout(res, 50));
      }
    })();
    await waitFor('the load under way before the backup starts', () => n >= 103);
    const { stdout } = await cli(['backup', '--out', archive], source);
    loading = false;
    await load;
    const after = (await create(accounts[0].key, 1, false)).json.id as string;
    const summary = JSON.parse(stdout);
    expect(summary.files).toBeGreaterThan(0);
    expect(fs.existsSync(archive)).toBe(true);

    // A backup never overwrites.
    await expect(cli(['backup', '--out', archive], source)).rejects.toMatchObject({
      stderr: expect.stringMatching(/already exists/),
    });

    svc.proc.kill('SIGTERM');
    expect(await svc.exited).toBe(0);

    // A data dir that is not empty is refused, and left as it was.
    fs.mkdirSync(path.join(dir, 'busy'));
    fs.writeFileSync(path.join(dir, 'busy', 'keep'), 'x');
    await expect(cli(['restore', archive], path.join(dir, 'busy'))).rejects.toMatchObject({
      stderr: expect.stringMatching(/is not empty/),
    });
    expect(fs.readdirSync(path.join(dir, 'busy'))).toEqual(['keep']);

    // A backup made by a newer release (a migration this one lacks) is refused, and leaves nothing behind.
    const unpacked = path.join(dir, 'unpacked');
    fs.mkdirSync(unpacked);
    await tar.extract({ file: archive, cwd: unpacked });
    const manifest = JSON.parse(fs.readFileSync(path.join(unpacked, 'manifest.json'), 'utf8'));
    manifest.database.migrations.push('999_from_the_future.sql');
    fs.writeFileSync(path.join(unpacked, 'manifest.json'), JSON.stringify(manifest));
    const future = path.join(dir, 'future.tar.gz');
    await tar.create({ gzip: true, file: future, cwd: unpacked }, ['manifest.json', 'db', 'files']);
    await expect(cli(['restore', future], path.join(dir, 'fresh'))).rejects.toMatchObject({
      stderr: expect.stringMatching(/999_from_the_future\.sql/),
    });
    expect(fs.existsSync(path.join(dir, 'fresh'))).toBe(false);

    await cli(['restore', archive, '--data-dir', restored], path.join(dir, 'unused'));
    const pg = await startEmbeddedPostgres(restored);
    const db = createPool(pg.url, 2);
    try {
      await checkInvariants(db);
      const { rows } = await db.query(
        'SELECT id, status, content_key, content_bytes FROM generations',
      );
      const ids = new Set(rows.map((r) => r.id));
      for (const id of before) expect(ids.has(id), id).toBe(true);
      // The backup ran under load: it holds renders created while the load ran, and none created after it.
      expect(rows.length).toBeGreaterThanOrEqual(before.length + 4 + 3);
      expect(ids.has(after)).toBe(false);
      const withFiles = rows.filter((r) => r.content_key);
      expect(withFiles.length).toBeGreaterThan(0);
      for (const r of withFiles) {
        const file = path.join(restored, 'files', r.content_key);
        expect(fs.existsSync(file), r.content_key).toBe(true);
        expect(fs.statSync(file).size).toBe(Number(r.content_bytes));
      }
    } finally {
      await db.end();
      await pg.stop();
    }

    // `rendergate migrate` finds the restored schema where the backup left it: nothing of this release's left to apply.
    const migrated = JSON.parse((await cli(['migrate'], restored)).stdout);
    expect(migrated.applied).toEqual([]);

    // The service starts on it and serves a restored file.
    const again = await spawnService({ ...env, RENDERGATE_DATA_DIR: restored });
    spawned.push(again);
    const api2 = client(again.base);
    const ready = await api2.call('GET', '/readyz');
    expect(ready.status).toBe(200);
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(ready.json.version).toBe(version);
    expect((await cli(['--version'], restored)).stdout).toBe(`rendergate ${version}\n`);
    let served = 0;
    for (const [i, id] of before.entries()) {
      const g = await api2.call('GET', `/v1/generations/${id}`, { key: accounts[i % 3].key });
      if (g.status !== 200 || g.json.status !== 'succeeded' || !g.json.contentUrl) continue;
      const content = await fetch(`${again.base}/v1/generations/${id}/content`, {
        headers: { authorization: `Bearer ${accounts[i % 3].key}` },
      });
      expect(content.status).toBe(200);
      expect((await content.arrayBuffer()).byteLength).toBeGreaterThan(0);
      served++;
    }
    expect(served).toBeGreaterThan(0);
    again.proc.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  } finally {
    await img.close();
  }
}, 600_000);
