// Upload quota (docs/account-limits.md): an account's live uploads are bounded in number and bytes, and
// parallel uploads cannot pass the bound together (the statement that records an upload raises the
// account's count only within the quota). GET /v1/uploads lists the live ones, so a client that lost
// the ids can delete them. The studio's uploads count against the same quota. The count stays equal
// to the uploads not marked deleted (checkInvariants) through parallel uploads, deletes, expiry and
// the janitor.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import sharp from 'sharp';
import { freshDatabase } from '../../helpers/db.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { waitFor } from '../../helpers/wait.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { StudioSession } from '../../studio/http-session.ts';
import { janitor } from '../../helpers/janitor.ts';

const COUNT = 5;
let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let c: ReturnType<typeof client>;
let small: Buffer;
let big: Buffer;
let quotaBytes: number;

beforeAll(async () => {
  small = await sharp({
    create: { width: 32, height: 32, channels: 3, background: { r: 10, g: 200, b: 30 } },
  })
    .png()
    .toBuffer();
  // Noise does not compress: a file of a known, larger size.
  big = await sharp(crypto.randomBytes(120 * 120 * 3), {
    raw: { width: 120, height: 120, channels: 3 },
  })
    .png()
    .toBuffer();
  quotaBytes = 2 * big.length + small.length; // two big files fit, a third does not
  dbh = await freshDatabase();
  svc = await startTestService(dbh.url, {
    env: {
      RENDERGATE_UPLOAD_QUOTA_COUNT: String(COUNT),
      RENDERGATE_UPLOAD_QUOTA_BYTES: String(quotaBytes),
      // Upload turns (admission/upload-turns.ts, their own test) would refuse the later rounds of
      // parallel uploads with 429 whenever deletes let many past the quota's early check at once.
      RENDERGATE_UPLOADS_PER_SECOND: '1000',
      RENDERGATE_WORKER_CONCURRENCY: '0',
    },
  });
  c = client(svc.base);
});
afterAll(async () => {
  await svc?.stop();
  await dbh?.drop();
});

const upload = (key: string, body: Buffer, type = 'image/png') =>
  fetch(`${svc.base}/v1/uploads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': type },
    body: new Uint8Array(body),
  }).then(async (r) => ({ status: r.status, json: await r.json() }));

const files = () => fs.readdirSync(path.join(svc.dataDir, 'files', 'uploads')).length;

it('lets 20 parallel uploads hold exactly the count quota, lists them newest first, and frees room on delete and expiry', async () => {
  const a = await c.account(0);
  const filesBefore = fs.existsSync(path.join(svc.dataDir, 'files', 'uploads')) ? files() : 0;
  const all = await Promise.all(Array.from({ length: 20 }, () => upload(a.key, small)));
  const made = all.filter((r) => r.status === 201);
  const refused = all.filter((r) => r.status === 409);
  expect([made.length, refused.length]).toEqual([COUNT, 20 - COUNT]);
  for (const r of refused) {
    expect(r.json.code).toBe('UPLOAD_QUOTA_EXCEEDED');
    const [d] = r.json.details;
    expect(d).toMatchObject({ quotaBytes, quotaCount: COUNT });
    expect(d.count).toBeLessThanOrEqual(COUNT);
    expect(d.usedBytes).toBe(d.count * small.length);
  }
  // No file is left behind for a refused upload.
  expect(files() - filesBefore).toBe(COUNT);

  // The list: newest first, paged by the cursor, only this account's.
  const ids = made
    .map((r) => r.json.id as string)
    .sort()
    .reverse();
  const first = await c.call('GET', '/v1/uploads?limit=3', { key: a.key });
  expect(first.status).toBe(200);
  expect(first.json.data.map((u: { id: string }) => u.id)).toEqual(ids.slice(0, 3));
  const second = await c.call('GET', `/v1/uploads?limit=3&cursor=${first.json.nextCursor}`, {
    key: a.key,
  });
  expect(second.json.data.map((u: { id: string }) => u.id)).toEqual(ids.slice(3));
  expect(second.json.nextCursor).toBeNull();
  expect((await c.call('GET', '/v1/uploads', { key: (await c.account(0)).key })).json).toEqual({
    data: [],
    nextCursor: null,
  });
  expect((await c.call('GET', '/v1/uploads?limit=0', { key: a.key })).json.details[0].field).toBe(
    'limit',
  );

  // A deleted upload no longer counts, nor does an expired one.
  expect((await c.call('DELETE', `/v1/uploads/${ids[0]}`, { key: a.key })).status).toBe(200);
  expect((await upload(a.key, small)).status).toBe(201);
  expect((await upload(a.key, small)).status).toBe(409);
  await dbh.db.query(`UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = $1`, [
    ids[1],
  ]);
  expect(
    (await c.call('GET', '/v1/uploads?limit=100', { key: a.key })).json.data.map(
      (u: { id: string }) => u.id,
    ),
  ).not.toContain(ids[1]);
  // The refusal just before is remembered by this process for OVER_QUOTA_MEMORY_MS (an expiry is room
  // it did not make): refused from that memory until then, stored after. The expired upload was still
  // counted: the upload its count refused released it (marked deleted, off the count) and was stored.
  await waitFor(
    'the room an expiry made to be seen',
    async () => {
      const r = await upload(a.key, small);
      expect([201, 409]).toContain(r.status);
      return r.status === 201;
    },
    { intervalMs: 100 },
  );
  const { rows: expired } = await dbh.db.query(
    'SELECT deleted_at IS NOT NULL AS released FROM uploads WHERE id = $1',
    [ids[1]],
  );
  expect(expired).toEqual([{ released: true }]);
  await checkInvariants(dbh.db);
});

it('keeps the count equal to the uploads not marked deleted through parallel uploads, deletes, expiry and the janitor', async () => {
  const a = await c.account(0);
  const count = () =>
    dbh.db
      .query('SELECT bytes, uploads FROM upload_usage WHERE account_id = $1', [a.accountId])
      .then((r) => r.rows[0]);
  // Rounds of parallel uploads, each with deletes of the last round's uploads beside it: which of
  // them the quota lets in depends on which deletes land first, but the count never drifts.
  let held: string[] = [];
  let stored = 0;
  for (let round = 0; round < 4; round++) {
    const [made] = await Promise.all([
      Promise.all(Array.from({ length: 8 }, () => upload(a.key, small))),
      Promise.all(held.map((id) => c.call('DELETE', `/v1/uploads/${id}`, { key: a.key }))),
    ]);
    expect(
      made.filter((r) => r.status !== 201 && r.status !== 409),
      'every upload stored or refused by the quota',
    ).toEqual([]);
    held = made.filter((r) => r.status === 201).map((r) => r.json.id as string);
    stored += held.length;
    await checkInvariants(dbh.db);
  }
  expect(stored).toBeGreaterThan(COUNT); // deletes made room
  expect(await count()).toEqual({ bytes: held.length * small.length, uploads: held.length });
  // Expired, then removed by the janitor (two at once, as two workers would): off the count once.
  await dbh.db.query(
    `UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = ANY ($1)`,
    [held],
  );
  expect((await count()).uploads).toBe(held.length);
  const janitors = [0, 1].map(() => janitor(dbh.db, svc.running.infra.storage));
  await Promise.all(janitors.map((j) => j.removeUploads()));
  expect(await count()).toEqual({ bytes: 0, uploads: 0 });
  await checkInvariants(dbh.db);
});

it('bounds the bytes too: of 8 parallel large uploads, those that fit the byte quota are kept', async () => {
  const a = await c.account(0);
  const all = await Promise.all(Array.from({ length: 8 }, () => upload(a.key, big)));
  expect(all.filter((r) => r.status === 201)).toHaveLength(2);
  const refused = all.filter((r) => r.status === 409);
  expect(refused).toHaveLength(6);
  expect(refused.map((r) => r.json.details[0])).toContainEqual({
    usedBytes: 2 * big.length,
    quotaBytes,
    count: 2,
    quotaCount: COUNT,
  });
  // A small one still fits beside them.
  expect((await upload(a.key, small)).status).toBe(201);
  await checkInvariants(dbh.db);
  const { rows } = await dbh.db.query(
    'SELECT sum(size_bytes)::bigint AS b FROM uploads WHERE account_id = $1 AND deleted_at IS NULL',
    [a.accountId],
  );
  expect(Number(rows[0].b)).toBeLessThanOrEqual(quotaBytes);
});

it("counts the studio's uploads against the same quota", async () => {
  const s = new StudioSession(svc.base);
  await s.signUp();
  await s.get('/models/rendergate/image-to-video');
  const studioUpload = () =>
    fetch(`${svc.base}/uploads`, {
      method: 'POST',
      body: new Uint8Array(small),
      headers: {
        cookie: s.cookieHeader(),
        origin: svc.base,
        'content-type': 'image/png',
        'csrf-token': s.csrf,
      },
    }).then(async (r) => ({ status: r.status, json: await r.json() }));
  const all = await Promise.all(Array.from({ length: COUNT + 3 }, studioUpload));
  expect(all.map((r) => r.status).sort()).toEqual([
    ...Array(COUNT).fill(201),
    ...Array(3).fill(409),
  ]);
  expect(all.find((r) => r.status === 409)!.json.code).toBe('UPLOAD_QUOTA_EXCEEDED');
});

it('answers a 415 on POST /v1/uploads with the image types it takes, not JSON', async () => {
  const a = await c.account(0);
  for (const type of ['text/plain', 'application/octet-stream']) {
    const r = await c.call('POST', '/v1/uploads', {
      key: a.key,
      body: 'hello',
      headers: { 'content-type': type },
    });
    expect(r.status).toBe(415);
    expect(r.json.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(r.json.message).toContain('image/png');
    expect(r.json.message).not.toMatch(/json/i);
  }
});
