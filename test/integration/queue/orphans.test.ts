// The janitor's orphan sweep on real storage and a real database: the file of a killed attempt whose
// render is then refunded at its deadline is removed, and so are a superseded attempt's file and an
// upload file no row names, once old enough; a render that is still storing (its current attempt's
// file not yet recorded), a young file and files a row names are left alone.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { ORPHAN_MIN_AGE_MS, removeOrphans } from '../../../src/queue/orphans.ts';
import { janitor } from '../../helpers/janitor.ts';

// An API process only: no worker claims, so the test sets each render's attempt as a claim would.
const f = serviceFixture({ role: 'api' });

describe('orphan sweep', () => {
  it('removes what no row names once older than the longest lease, never a render still storing', async () => {
    const { db, storage } = f.svc.running.infra;
    const root = path.join(f.svc.dataDir, 'files');
    const a = await f.api.account(10_000);
    const create = async () =>
      (
        await f.api.call('POST', '/v1/generations', {
          key: a.key,
          body: { modelId: 'rendergate/shot-list', inputs: { text: 'Orphans. Two sentences.' } },
          headers: { 'idempotency-key': crypto.randomUUID() },
        })
      ).json.id as string;
    const plant = async (key: string, ageMs: number) => {
      const src = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rg-orphan-')), 'f');
      fs.writeFileSync(src, `bytes of ${key}`);
      await storage.put(key, src, 'application/octet-stream');
      const t = new Date(Date.now() - ageMs);
      fs.utimesSync(path.join(root, key), t, t);
    };
    const old = ORPHAN_MIN_AGE_MS + 60_000;

    // A killed attempt: its worker stored the file and died before recording it; the render is then
    // refunded at its deadline by the janitor's own sweep.
    const killed = await create();
    await db.query(
      `UPDATE generations SET attempts = 1, lease_owner = 'dead', lease_until = now() - interval '1 minute',
      deadline_at = now() - interval '1 second' WHERE id = $1`,
      [killed],
    );
    await plant(`generations/${killed}-1.mp4`, old);
    // A render mid-store: attempt 2 is running and has uploaded its file but not recorded it yet;
    // attempt 1's file was superseded and can never be recorded.
    const storing = await create();
    await db.query(
      `UPDATE generations SET attempts = 2, lease_owner = 'live', lease_until = now() + interval '15 seconds'
      WHERE id = $1`,
      [storing],
    );
    await plant(`generations/${storing}-2.mp4`, old);
    await plant(`generations/${storing}-1.mp4`, old);
    // A file a row names (a succeeded render's), a young orphan, an upload's file and an upload orphan.
    const done = await create();
    await db.query(
      `UPDATE generations SET status = 'succeeded', content_key = $2, completed_at = now() WHERE id = $1`,
      [done, `generations/${done}-1.mp4`],
    );
    await plant(`generations/${done}-1.mp4`, old);
    // Posters (queue/poster.ts) go with their video: the named one's stays, the killed one's goes,
    // the current attempt's of a render still storing stays.
    await plant(`posters/${done}-1.jpg`, old);
    await plant(`posters/${killed}-1.jpg`, old);
    await plant(`posters/${storing}-2.jpg`, old);
    const young = `generations/gen_${crypto.randomBytes(16).toString('hex')}-1.mp4`;
    await plant(young, 1_000);
    const png = await sharp({
      create: { width: 64, height: 64, channels: 3, background: '#336699' },
    })
      .png()
      .toBuffer();
    const upload = await fetch(`${f.svc.base}/v1/uploads`, {
      method: 'POST',
      body: png,
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'image/png' },
    });
    expect(upload.status).toBe(201);
    const uploadKey = `uploads/${((await upload.json()) as { id: string }).id}`;
    const t = new Date(Date.now() - old);
    fs.utimesSync(path.join(root, uploadKey), t, t);
    const lostUpload = `uploads/upl_${crypto.randomBytes(16).toString('hex')}`;
    await plant(lostUpload, old);

    await janitor(db, storage).sweep();
    expect((await f.api.call('GET', `/v1/generations/${killed}`, { key: a.key })).json.status).toBe(
      'failed',
    );
    const exists = (key: string) => fs.existsSync(path.join(root, key));
    expect(exists(`generations/${killed}-1.mp4`)).toBe(false);
    expect(exists(`generations/${storing}-1.mp4`)).toBe(false);
    expect(exists(lostUpload)).toBe(false);
    expect(exists(`generations/${storing}-2.mp4`)).toBe(true);
    expect(exists(`generations/${done}-1.mp4`)).toBe(true);
    expect(exists(`posters/${done}-1.jpg`)).toBe(true);
    expect(exists(`posters/${killed}-1.jpg`)).toBe(false);
    expect(exists(`posters/${storing}-2.jpg`)).toBe(true);
    expect(exists(young)).toBe(true);
    expect(exists(uploadKey)).toBe(true);

    // That attempt's worker dies too before recording the file: once the render is refunded at its
    // deadline, the file can never be recorded, and the next sweep removes it.
    expect(await removeOrphans(db, storage)).toEqual([]);
    await db.query(
      `UPDATE generations SET deadline_at = now() - interval '1 second' WHERE id = $1`,
      [storing],
    );
    await janitor(db, storage).sweep();
    expect(
      (await f.api.call('GET', `/v1/generations/${storing}`, { key: a.key })).json.status,
    ).toBe('failed');
    expect(exists(`generations/${storing}-2.mp4`)).toBe(false);
    expect(exists(`posters/${storing}-2.jpg`)).toBe(false);
    expect(await removeOrphans(db, storage)).toEqual([]);
  });
});
