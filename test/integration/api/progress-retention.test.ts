// Progress rising to 1 on a real render (the built-in renderer reads ffmpeg's -progress output, the worker
// persists it under its lease), the queue position of waiting renders, and retention of outputs on file
// and on S3 (s3rver) storage: expiresAt set when the file is stored, the file removed once by whichever
// janitor locks it, contentUrl kept and /content answering 410 CONTENT_EXPIRED afterwards.
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import sharp from 'sharp';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { imageServer } from '../../helpers/images.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { S3Storage } from '../../../src/storage/s3.ts';
import { waitFor } from '../../helpers/wait.ts';
import { janitor } from '../../helpers/janitor.ts';

let img: Awaited<ReturnType<typeof imageServer>>;
let s3: S3rver;
let tmp: string;
const AWS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_ENDPOINT_URL'] as const;

beforeAll(async () => {
  img = await imageServer();
  tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'rg-retention-'));
  s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: path.join(tmp, 's3rver'),
  });
  const { port } = await s3.run();
  // S3Storage reads the standard AWS variables from the environment, as in production
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
  });
  await new S3Storage({ bucket: 'outputs', prefix: '' }).client.send(
    new CreateBucketCommand({ Bucket: 'outputs' }),
  );
});
afterAll(async () => {
  await img?.close();
  await s3?.close();
  for (const k of AWS) delete process.env[k];
  if (tmp) await fsp.rm(tmp, { recursive: true, force: true });
});

const render = (
  api: ReturnType<typeof client>,
  key: string,
  duration = 5,
  image = img.url('/a.png'),
) =>
  api.call('POST', '/v1/generations', {
    key,
    body: {
      modelId: 'rendergate/image-to-video',
      inputs: { prompt: 'slow push in', image, duration },
    },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });

describe.each([
  ['file', 'file'],
  ['S3', 's3://outputs/retention'],
])('retention on %s storage', (_name, storage) => {
  let dbh: Awaited<ReturnType<typeof freshDatabase>>;
  let svc: TestService;
  beforeAll(async () => {
    dbh = await freshDatabase();
    svc = await startTestService(dbh.url, {
      env: { RENDERGATE_STORAGE: storage, RENDERGATE_OUTPUT_RETENTION: '1h' },
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await dbh?.drop();
  });

  it('an upload is stored there and rendered from there; expiresAt follows completedAt; after it the file is removed once and content answers 410, contentUrl kept', async () => {
    const api = client(svc.base);
    const a = await api.account(100_000);
    const png = await sharp({
      create: { width: 200, height: 120, channels: 3, background: '#2a6' },
    })
      .png()
      .toBuffer();
    const up = await fetch(`${svc.base}/v1/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'image/png' },
      body: new Uint8Array(png),
    });
    const u = (await up.json()) as { url: string };
    expect(up.status).toBe(201);
    expect(
      Buffer.from(
        await (await fetch(u.url, { headers: { authorization: `Bearer ${a.key}` } })).arrayBuffer(),
      ).equals(png),
    ).toBe(true);
    const g = await render(api, a.key, 5, u.url);
    const done = await api.waitFinal(a.key, g.json.id);
    expect(done).toMatchObject({ status: 'succeeded', progress: 1, queuePosition: null });
    expect(Date.parse(done.expiresAt) - Date.parse(done.completedAt)).toBe(3_600_000);
    expect(
      (await fetch(done.contentUrl, { headers: { authorization: `Bearer ${a.key}` } })).status,
    ).toBe(200);
    // The hour passes for this row (a loaded machine could not be trusted to keep a short retention's
    // timing between the render and the checks above).
    const {
      rows: [row],
    } = await dbh.db.query(
      `UPDATE generations SET expires_at = now() - interval '1 second' WHERE id = $1 RETURNING content_key, expires_at`,
      [g.json.id],
    );
    // The API process hears of the change (the trigger's notification) before answering from its cache.
    await waitFor(
      'the poll to show the new expiresAt',
      async () =>
        (await api.call('GET', `/v1/generations/${g.json.id}`, { key: a.key })).json.expiresAt ===
        row.expires_at.toISOString(),
    );
    // Past expiresAt the file is no longer served, even before a janitor has run.
    const early = await api.call('GET', `/v1/generations/${g.json.id}/content`, { key: a.key });
    expect([early.status, early.json.code]).toEqual([410, 'CONTENT_EXPIRED']);
    // Three janitors (as on three nodes) sweep at once, beside the service's own: the file is removed by
    // at most one of them, and it is removed.
    const storageOf = svc.running.infra.storage;
    const removed = await Promise.all(
      [0, 1, 2].map(() => janitor(dbh.db, storageOf).expireOutputs()),
    );
    expect(removed.reduce((x, y) => x + y, 0)).toBeLessThanOrEqual(1);
    const {
      rows: [marked],
    } = await dbh.db.query('SELECT content_removed_at FROM generations WHERE id = $1', [g.json.id]);
    expect(marked.content_removed_at).not.toBeNull();
    await expect(storageOf.read(row.content_key).then((s) => s.toArray())).rejects.toThrow();
    const after = await api.call('GET', `/v1/generations/${g.json.id}`, { key: a.key });
    expect(after.json).toMatchObject({
      status: 'succeeded',
      contentUrl: done.contentUrl,
      expiresAt: row.expires_at.toISOString(),
    });
    const gone = await api.call('GET', `/v1/generations/${g.json.id}/content`, { key: a.key });
    expect([gone.status, gone.json.code]).toEqual([410, 'CONTENT_EXPIRED']);
  });
});

describe('progress and queue position', () => {
  let dbh: Awaited<ReturnType<typeof freshDatabase>>;
  let svc: TestService;
  beforeAll(async () => {
    dbh = await freshDatabase();
    svc = await startTestService(dbh.url, {
      env: { RENDERGATE_WORKER_CONCURRENCY: '1', RENDERGATE_OUTPUT_RETENTION: '0' },
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await dbh?.drop();
  });

  it('progress rises from 0 to 1 on a real render; waiting renders count their place; 0 retention keeps files forever', async () => {
    const api = client(svc.base);
    const a = await api.account(1_000_000, { rateLimitPerMinute: 100_000 }); // polled every 25 ms
    const first = await render(api, a.key, 10);
    const queued = [await render(api, a.key, 5), await render(api, a.key, 5)];
    const seen: number[] = [];
    const positions = new Set<string>();
    const last = await waitFor(
      'the render to finish, sampling as it goes',
      async () => {
        const g = (await api.call('GET', `/v1/generations/${first.json.id}`, { key: a.key })).json;
        if (g.progress !== null && seen.at(-1) !== g.progress) seen.push(g.progress);
        const q = (await api.call('GET', `/v1/generations/${queued[1].json.id}`, { key: a.key }))
          .json;
        positions.add(`${q.startedAt === null}:${q.queuePosition}`);
        return g.status !== 'queued' && g;
      },
      { timeoutMs: 120_000, intervalMs: 25 },
    );
    expect(last.status).toBe('succeeded');
    expect(seen.at(-1)).toBe(1);
    expect(seen.some((p) => p > 0 && p < 1)).toBe(true);
    expect([...seen].sort((x, y) => x - y)).toEqual(seen); // never backwards
    // while the first renders, the third waits second in line (the second is next; third before the first starts), never
    // reporting a place once started
    expect(positions.has('true:2')).toBe(true);
    for (const p of positions)
      expect(p.startsWith('false:') ? p === 'false:null' : /^true:[123]$/.test(p), p).toBe(true);
    for (const q of queued) expect((await api.waitFinal(a.key, q.json.id)).expiresAt).toBeNull();
  }, 180_000);
});
