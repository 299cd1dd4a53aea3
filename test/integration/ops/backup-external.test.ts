// Backups on an external PostgreSQL (DATABASE_URL), and the lock that keeps stored files and the
// database snapshot together: while a backup holds it, removing a stored file waits for a later sweep.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { expect, it } from 'vitest';
import { releaseBackupLock, takeBackupLock } from '../../../src/db/backup-lock.ts';
import { createPool } from '../../../src/db/pool.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { emptyDatabase } from '../../helpers/db.ts';
import { serviceFixture } from '../../helpers/fixture.ts';
import { janitor } from '../../helpers/janitor.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');
const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '2' } });

function cli(args: string[], env: Record<string, string>) {
  return run(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
  });
}

async function render(key: string, image: string) {
  const r = await f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId: 'rendergate/image-to-video', inputs: { prompt: 'p', image } },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(r.status).toBe(202);
  const g = await f.api.waitFinal(key, r.json.id, 120_000);
  expect(g.status).toBe('succeeded');
  return g.id as string;
}

const sweep = () => janitor(f.dbh.db, f.svc.running.infra.storage, f.svc.running.infra.log).sweep();

it('removing a stored file waits while a backup holds its lock, and happens on the next sweep after', async () => {
  const a = await f.api.account(10_000);
  const id = await render(a.key, f.img.url('/a.png'));
  const {
    rows: [row],
  } = await f.dbh.db.query('SELECT content_key FROM generations WHERE id = $1', [id]);
  const file = path.join(f.svc.dataDir, 'files', row.content_key);
  expect(fs.existsSync(file)).toBe(true);

  const session = new pg.Client({ connectionString: f.dbh.url });
  await session.connect();
  try {
    await takeBackupLock(session);
    expect((await f.api.call('DELETE', `/v1/generations/${id}`, { key: a.key })).status).toBe(200);
    expect(fs.existsSync(file)).toBe(true); // the backup may still copy it
    await sweep(); // the service's own janitor sweeps too, every 5 s: the same rule holds it back
    expect(fs.existsSync(file)).toBe(true);
    await releaseBackupLock(session);
  } finally {
    await session.end();
  }
  await sweep();
  expect(fs.existsSync(file)).toBe(false);
  const { rows } = await f.dbh.db.query('SELECT content_key FROM generations WHERE id = $1', [id]);
  expect(rows[0].content_key).toBeNull();
}, 180_000);

it('backs up a DATABASE_URL database with its files and restores it into an empty database', async () => {
  const a = await f.api.account(10_000);
  const id = await render(a.key, f.img.url('/b.png'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-backup-ext-'));
  const empty = await emptyDatabase();
  try {
    const archive = path.join(dir, 'b.tar.gz');
    await cli(['backup', '--out', archive], {
      DATABASE_URL: f.dbh.url,
      RENDERGATE_DATA_DIR: f.svc.dataDir,
    });

    const url = empty.url;
    const target = path.join(dir, 'restored');
    await cli(['restore', archive], { DATABASE_URL: url, RENDERGATE_DATA_DIR: target });
    // A second restore into the now full database is refused.
    await expect(
      cli(['restore', archive], {
        DATABASE_URL: url,
        RENDERGATE_DATA_DIR: path.join(dir, 'other'),
      }),
    ).rejects.toMatchObject({ stderr: expect.stringMatching(/DATABASE_URL is not empty/) });

    const db = createPool(url, 2);
    try {
      await checkInvariants(db);
      const count = async (q: pg.Pool, table: string) =>
        (await q.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
      // Nothing ran on the source meanwhile: the copy equals it, table by table.
      for (const table of [
        'accounts',
        'api_keys',
        'generations',
        'ledger_entries',
        'key_day_usage',
      ]) {
        expect(await count(db, table), table).toBe(await count(f.dbh.db, table));
      }
      const { rows } = await db.query(
        'SELECT content_key, content_bytes FROM generations WHERE id = $1',
        [id],
      );
      expect(fs.statSync(path.join(target, 'files', rows[0].content_key)).size).toBe(
        Number(rows[0].content_bytes),
      );
      const balances = async (q: pg.Pool) =>
        (await q.query('SELECT id, balance_cents FROM accounts ORDER BY id')).rows;
      expect(await balances(db)).toEqual(await balances(f.dbh.db));
    } finally {
      await db.end();
    }
  } finally {
    await empty.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);
