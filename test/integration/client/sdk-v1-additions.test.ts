// The SDK on the v1 additions, against the real service: uploads (and a render from one), cancel (also
// what an aborted run() does), waiting held by the server (Prefer: wait) instead of polling, progress
// reported while waiting, webhook endpoints and their deliveries, verifyWebhook on a real signed delivery,
// and a typed error for each new code. Every answer is checked against /v1/openapi.json.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import {
  Rendergate,
  RendergateError,
  verifyWebhook,
  type Generation,
} from '../../../packages/client/src/index.ts';
import { serviceFixture } from '../../helpers/fixture.ts';
import { checkedFetch } from '../../helpers/openapi-check.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { waitFor } from '../../helpers/wait.ts';

const TEXT = 'rendergate/shot-list';
const VIDEO = 'rendergate/image-to-video';
const story =
  'The camera rises over the harbour at dawn. Fishing boats leave one by one. A gull lands on the pier.';
const f = serviceFixture({
  env: { RENDERGATE_WORKER_CONCURRENCY: '2', RENDERGATE_WEBHOOK_RETRY_SECONDS: '1,1,1' },
});

/** A client whose every request is recorded with the answer's status and Preference-Applied header. */
async function sdk(cents: number, base = f.svc.base) {
  const acct = await client(base).account(cents);
  const requests: { method: string; path: string; status: number; applied: string | null }[] = [];
  const checked = checkedFetch(base);
  const rg = new Rendergate({
    apiKey: acct.key,
    baseUrl: base,
    fetch: async (input, init) => {
      const r = await checked(input, init);
      requests.push({
        method: init?.method ?? 'GET',
        path: new URL(input instanceof Request ? input.url : input).pathname,
        status: r.status,
        applied: r.headers.get('preference-applied'),
      });
      return r;
    },
  });
  return { rg, requests, ...acct };
}

async function caught(p: Promise<unknown>): Promise<RendergateError> {
  const e = await p.then(
    () => undefined,
    (err) => err,
  );
  expect(e).toBeInstanceOf(RendergateError);
  return e as RendergateError;
}

const png = () =>
  sharp({ create: { width: 320, height: 180, channels: 3, background: { r: 30, g: 160, b: 90 } } })
    .png()
    .toBuffer();

describe('uploads', () => {
  it('stores an image, serves it back, renders from its url, and deletes it', async () => {
    const { rg } = await sdk(500);
    const bytes = await png();
    const u = await rg.uploads.create(new Uint8Array(bytes), 'image/png');
    expect(u).toMatchObject({
      id: expect.stringMatching(/^upl_/),
      contentType: 'image/png',
      sizeBytes: bytes.length,
      width: 320,
      height: 180,
    });
    const back = await rg.uploads.get(u.id);
    expect(back.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await back.arrayBuffer()).equals(bytes)).toBe(true);
    expect((await rg.uploads.list().toArray()).map((x) => x.id)).toEqual([u.id]);
    const g = await rg.run(VIDEO, { prompt: 'a slow push-in', image: u.url });
    expect(g.status).toBe('succeeded');
    expect(await rg.uploads.delete(u.id)).toEqual({ id: u.id, deleted: true });
    expect(await rg.uploads.list().toArray()).toEqual([]);
    expect(await caught(rg.uploads.get(u.id))).toMatchObject({
      status: 404,
      code: 'UPLOAD_NOT_FOUND',
    });
    expect(
      await caught(rg.uploads.create(new TextEncoder().encode('not an image'), 'image/png')),
    ).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
    expect(await caught(rg.uploads.create(bytes, 'text/plain' as never))).toMatchObject({
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    });
  });
});

describe('cancel and waiting', () => {
  it('cancel() refunds a queued render and keeps it; again is unchanged; a succeeded one is GENERATION_NOT_CANCELLABLE', async () => {
    const { rg } = await sdk(500);
    const held = `/held/cancel-${Date.now()}.png`;
    const g = await rg.generations.create(VIDEO, { prompt: 'x', image: f.img.url(held) });
    const c = await rg.generations.cancel(g.id);
    expect(c).toMatchObject({ id: g.id, status: 'refunded', refundedCents: g.costCents });
    expect((await rg.generations.cancel(g.id)).status).toBe('refunded');
    expect((await rg.me()).balanceCents).toBe(500);
    f.img.release(held);
    const done = await rg.run(TEXT, { text: story });
    expect(await caught(rg.generations.cancel(done.id))).toMatchObject({
      status: 409,
      code: 'GENERATION_NOT_CANCELLABLE',
      details: [{ status: 'succeeded' }],
    });
  });

  it('an aborted run() cancels its render: refunded, the balance whole again', async () => {
    const { rg } = await sdk(500);
    const held = `/held/abort-${Date.now()}.png`;
    const ctl = new AbortController();
    let id = '';
    const running = rg.run(
      VIDEO,
      { prompt: 'x', image: f.img.url(held) },
      {
        signal: ctl.signal,
        onProgress: (g) => {
          id = g.id;
          ctl.abort();
        },
      },
    );
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    const g = await rg.generations.get(id);
    expect(g).toMatchObject({ status: 'refunded', refundedCents: g.costCents });
    expect((await rg.me()).balanceCents).toBe(500);
    f.img.release(held);
  });

  it("wait() follows the render's live events rather than polling, and ends the moment the render does", async () => {
    const { rg, requests } = await sdk(500);
    const held = `/held/hold-${Date.now()}.png`;
    const g = await rg.generations.create(VIDEO, { prompt: 'x', image: f.img.url(held) });
    const waiting = rg.generations.wait(g.id);
    // released only once the SDK's event stream is open on the server
    await waitFor(
      "the SDK's event stream",
      async () =>
        /^rendergate_event_streams [1-9]/m.test((await f.api.call('GET', '/metrics')).text),
      { intervalMs: 50 },
    );
    f.img.release(held);
    expect((await waiting).status).toBe('succeeded');
    const reads = requests.filter((r) => r.method === 'GET' && r.path.includes(g.id));
    expect(reads.length).toBeGreaterThanOrEqual(1);
    expect(reads.every((r) => r.path.endsWith(`${g.id}/events`) && r.status === 200)).toBe(true);
  });

  it('run() reports each state while it waits: queued with its place or start, then succeeded with progress 1', async () => {
    const { rg } = await sdk(500);
    const states: Generation[] = [];
    const g = await rg.run(
      VIDEO,
      { prompt: 'a slow push-in', image: f.img.url('/a.png') },
      { onProgress: (x) => states.push(x) },
    );
    expect(states[0].status).toBe('queued');
    expect(states[0].queuePosition !== null || states[0].startedAt !== null).toBe(true);
    expect(states.at(-1)).toMatchObject({
      id: g.id,
      status: 'succeeded',
      progress: 1,
      queuePosition: null,
    });
    expect(g.expiresAt).toEqual(expect.any(String));
  });

  it('content() of a range outside the file is RANGE_NOT_SATISFIABLE', async () => {
    const { rg } = await sdk(500);
    const g = await rg.run(VIDEO, { prompt: 'x', image: f.img.url('/b.png') });
    expect(await caught(rg.generations.content(g.id, { range: 'bytes=999999999-' }))).toMatchObject(
      { status: 416, code: 'RANGE_NOT_SATISFIABLE' },
    );
  });
});

describe('webhooks', () => {
  let rx: http.Server;
  let rxBase = '';
  const got: { headers: http.IncomingHttpHeaders; raw: Buffer }[] = [];
  beforeAll(async () => {
    // A receiver outside our product: it keeps the raw body and headers of each POST and answers 204.
    rx = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req
        .on('data', (c) => chunks.push(c))
        .on('end', () => {
          got.push({ headers: req.headers, raw: Buffer.concat(chunks) });
          res.writeHead(204).end();
        });
    });
    await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
    rxBase = `http://127.0.0.1:${(rx.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => rx.close(() => r())));

  it('endpoints: create with a secret, list without, get with, deliveries, delete; the 11th is WEBHOOK_ENDPOINT_LIMIT', async () => {
    const { rg } = await sdk(500);
    const e = await rg.webhookEndpoints.create({
      url: `${rxBase}/hook`,
      events: ['generation.succeeded'],
    });
    expect(e).toMatchObject({
      id: expect.stringMatching(/^whe_/),
      enabled: true,
      events: ['generation.succeeded'],
      secret: expect.stringMatching(/^whsec_/),
    });
    expect((await rg.webhookEndpoints.get(e.id)).secret).toBe(e.secret);
    for (let i = 0; i < 9; i++)
      await rg.webhookEndpoints.create({
        url: `${rxBase}/other-${i}`,
        events: ['generation.failed'],
      });
    const all = await rg.webhookEndpoints.list().toArray();
    expect(all).toHaveLength(10);
    expect(all.every((x) => x.secret === undefined)).toBe(true);
    expect(await caught(rg.webhookEndpoints.create({ url: `${rxBase}/eleventh` }))).toMatchObject({
      status: 409,
      code: 'WEBHOOK_ENDPOINT_LIMIT',
    });
    const g = await rg.run(TEXT, { text: story });
    const ds = await waitFor(
      'the delivery',
      async () => {
        const x = await rg.webhookEndpoints.deliveries(e.id).toArray();
        return x[0]?.status === 'delivered' && x;
      },
      { intervalMs: 100 },
    );
    expect(ds).toEqual([
      expect.objectContaining({
        type: 'generation.succeeded',
        generationId: g.id,
        status: 'delivered',
        attempts: 1,
      }),
    ]);
    expect(await rg.webhookEndpoints.delete(e.id)).toEqual({ id: e.id, deleted: true });
    expect(await caught(rg.webhookEndpoints.get(e.id))).toMatchObject({
      status: 404,
      code: 'WEBHOOK_ENDPOINT_NOT_FOUND',
    });
  });

  it('verifyWebhook accepts a real signed delivery, and refuses it tampered or stale', async () => {
    const { rg } = await sdk(500);
    const e = await rg.webhookEndpoints.create({
      url: `${rxBase}/verify`,
      events: ['generation.succeeded'],
    });
    const g = await rg.run(TEXT, { text: story });
    const find = () =>
      got.find((d) => {
        try {
          return JSON.parse(d.raw.toString()).data.id === g.id;
        } catch {
          return false;
        }
      });
    const d = await waitFor('the delivery', find, { intervalMs: 100 });
    const event = await verifyWebhook(d.raw, d.headers, e.secret!);
    expect(event).toMatchObject({
      type: 'generation.succeeded',
      data: { id: g.id, status: 'succeeded' },
    });
    expect(
      await caught(
        verifyWebhook(
          d.raw.toString().replace('succeeded', 'failed'),
          d.headers as Record<string, string>,
          e.secret!,
        ),
      ),
    ).toMatchObject({ code: 'WEBHOOK_INVALID' });
    expect(
      await caught(
        verifyWebhook(d.raw, d.headers as Record<string, string>, e.secret!, {
          now: Date.now() + 10 * 60_000,
        }),
      ),
    ).toMatchObject({ code: 'WEBHOOK_INVALID' });
    expect(
      await caught(
        verifyWebhook(
          d.raw,
          d.headers as Record<string, string>,
          (await rg.webhookEndpoints.create({ url: `${rxBase}/x` })).secret!,
        ),
      ),
    ).toMatchObject({ code: 'WEBHOOK_INVALID' });
  });
});

describe('output retention', () => {
  let svc: TestService;
  let dbh: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    dbh = await freshDatabase();
    svc = await startTestService(dbh.url, { env: { RENDERGATE_OUTPUT_RETENTION: '2s' } });
  });
  afterAll(async () => {
    await svc?.stop();
    await dbh?.drop();
  });

  it('content() after expiresAt is CONTENT_EXPIRED', async () => {
    const { rg } = await sdk(500, svc.base);
    const g = await rg.run(VIDEO, { prompt: 'x', image: f.img.url('/a.png') });
    await waitFor(
      'the clock to pass expiresAt',
      () => Date.now() > Date.parse(g.expiresAt!) + 100,
      { intervalMs: 100 },
    );
    expect(await caught(rg.generations.content(g.id))).toMatchObject({
      status: 410,
      code: 'CONTENT_EXPIRED',
    });
  });
});
