// A full or failing disk (docs/api.md "Abuse limits", "Faults"): the service's storage directory is a
// tmpfs of 2 MiB (mounted by the test, which runs as root), filled to the last byte, then remounted
// read-only. An upload answers 507 INSUFFICIENT_STORAGE when the disk is full and 503 when it cannot be
// written, with Retry-After; a render whose output cannot be stored fails and is refunded; no row of
// uploads or generations points at a file that was not stored.
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { imageServer } from '../../helpers/images.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-full-'));
const files = path.join(dataDir, 'files');
let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let img: Awaited<ReturnType<typeof imageServer>>;
let mounted = false;

beforeAll(async () => {
  fs.mkdirSync(files);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', files]);
  mounted = true;
  dbh = await freshDatabase();
  svc = await startTestService(dbh.url, { dataDir });
  img = await imageServer();
}, 60_000);
afterAll(async () => {
  await img?.close();
  await svc?.stop();
  if (mounted) execFileSync('umount', ['-l', files]);
  await dbh?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Every stored key the database names exists in storage. */
async function rowsPointAtStoredFiles() {
  const keys = [
    ...(await dbh.db.query('SELECT storage_key AS k FROM uploads')).rows,
    ...(
      await dbh.db.query('SELECT content_key AS k FROM generations WHERE content_key IS NOT NULL')
    ).rows,
  ].map((r) => r.k as string);
  for (const k of keys) expect(fs.existsSync(path.join(files, k)), k).toBe(true);
  return keys.length;
}

it('full: upload 507, render refunded; unwritable: upload 503; no row without its file', async () => {
  const api = client(svc.base);
  const a = await api.account(100_000);
  const noise = await sharp(crypto.randomBytes(300 * 300 * 3), {
    raw: { width: 300, height: 300, channels: 3 },
  })
    .png()
    .toBuffer();
  const upload = () =>
    fetch(`${svc.base}/v1/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'image/png' },
      body: new Uint8Array(noise),
    }).then(async (r) => ({ status: r.status, json: await r.json(), headers: r.headers }));
  expect((await upload()).status).toBe(201); // room for one
  // fill the disk to its last byte
  const filler = path.join(files, 'filler');
  const fd = fs.openSync(filler, 'w');
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(64 * 1024));
  } catch (e) {
    expect((e as NodeJS.ErrnoException).code).toBe('ENOSPC');
  }
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(512));
  } catch {
    /* the last bytes */
  }
  fs.closeSync(fd);

  const full = await upload();
  expect([full.status, full.json.code]).toEqual([507, 'INSUFFICIENT_STORAGE']);
  expect(Number(full.headers.get('retry-after'))).toBeGreaterThan(0);

  const g = await api.call('POST', '/v1/generations', {
    key: a.key,
    body: {
      modelId: 'rendergate/image-to-video',
      inputs: { prompt: 'push in', image: img.url('/a.png') },
    },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(g.status, g.text).toBe(202);
  const done = await api.waitFinal(a.key, g.json.id, 120_000);
  expect([done.status, done.error.code, done.refundedCents]).toEqual([
    'failed',
    'STORAGE_FAILED',
    g.json.costCents,
  ]);

  execFileSync('mount', ['-o', 'remount,ro', files]);
  // read-only now (Node 26's rmSync reports it as "Unknown error: Read-only file system", no code)
  expect(() => fs.rmSync(filler)).toThrow(/EROFS|read-only/i);
  const ro = await upload();
  expect([ro.status, ro.json.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
  expect(Number(ro.headers.get('retry-after'))).toBeGreaterThan(0);
  execFileSync('mount', ['-o', 'remount,rw', files]);
  fs.rmSync(filler);

  expect(await rowsPointAtStoredFiles()).toBe(1); // the one upload that was stored
  expect((await dbh.db.query('SELECT count(*)::int AS n FROM uploads')).rows[0].n).toBe(1);
  expect((await api.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(100_000 - 0);
}, 180_000);
