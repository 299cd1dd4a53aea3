// The SDK (packages/client) against the real service: every method, run() on video and text, waiting,
// paging, an interrupted run(), retries that never charge twice, and a typed error for each contract
// error. Every answer the SDK receives is also checked against /v1/openapi.json (checkedFetch).
import { describe, expect, it } from 'vitest';
import {
  Rendergate,
  RendergateError,
  type Generation,
} from '../../../packages/client/src/index.ts';
import { serviceFixture } from '../../helpers/fixture.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { checkedFetch } from '../../helpers/openapi-check.ts';
import { dropProxy } from '../../helpers/drop-proxy.ts';
import { waitFor } from '../../helpers/wait.ts';

const TEXT = 'rendergate/shot-list';
const VIDEO = 'rendergate/image-to-video';
const story =
  'The camera rises over the harbour at dawn. Fishing boats leave one by one. A gull lands on the pier.';

const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '2' } });

async function sdk(
  cents: number,
  keyOpts: Record<string, unknown> = {},
  opts: { baseUrl?: string; maxRetries?: number } = {},
) {
  const acct = await f.api.account(cents, keyOpts);
  const rg = new Rendergate({
    apiKey: acct.key,
    baseUrl: opts.baseUrl ?? f.svc.base,
    maxRetries: opts.maxRetries,
    fetch: checkedFetch(f.svc.base),
  });
  return { rg, ...acct };
}

async function caught(p: Promise<unknown>): Promise<RendergateError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(RendergateError);
    return e as RendergateError;
  }
  throw new Error('expected a RendergateError');
}

describe('Rendergate client', () => {
  it('reads the account, the catalog, a model with its input schema, and a quote', async () => {
    const { rg, accountId } = await sdk(500);
    const me = await rg.me();
    expect(me).toMatchObject({ accountId, balanceCents: 500, currency: 'EUR' });
    const models = await rg.models.list();
    expect(models.map((m) => m.id)).toEqual(
      expect.arrayContaining([TEXT, VIDEO, 'rendergate/start-end-to-video']),
    );
    const detail = await rg.models.get(VIDEO);
    expect(detail.inputSchema).toMatchObject({ type: 'object', required: ['prompt', 'image'] });
    const quote = await rg.quote(VIDEO, {
      prompt: 'push in',
      image: f.img.url('/a.png'),
      duration: 10,
    });
    expect(quote).toMatchObject({
      modelId: VIDEO,
      costCents: 60,
      currency: 'EUR',
      inputs: { duration: 10, guidance_scale: 0.5 },
    });
  });

  it('run() on the text model resolves with the succeeded generation and its text', async () => {
    const { rg } = await sdk(500);
    const seen: string[] = [];
    const g = await rg.run(
      TEXT,
      { text: story, mode: 'shot_list' },
      { onProgress: (x) => seen.push(x.status) },
    );
    expect(g.status).toBe('succeeded');
    expect(g.textOutput).toMatch(/1\./);
    expect(seen.at(-1)).toBe('succeeded');
    expect((await caught(rg.generations.content(g.id))).code).toBe('CONTENT_NOT_FOUND');
  });

  it('run() on a video model, then the file streamed whole and by range', async () => {
    const { rg } = await sdk(500);
    const g = await rg.run(VIDEO, { prompt: 'a slow push-in', image: f.img.url('/a.png') });
    expect(g).toMatchObject({ status: 'succeeded', contentType: 'video/mp4', refundedCents: 0 });
    const res = await rg.generations.content(g.id);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes.length).toBe(Number(res.headers.get('content-length')));
    expect(new TextDecoder().decode(bytes.slice(4, 8))).toBe('ftyp');
    const part = await rg.generations.content(g.id, { range: 'bytes=0-99' });
    expect(part.status).toBe(206);
    expect((await part.arrayBuffer()).byteLength).toBe(100);
  });

  it('run() of a render that fails throws GENERATION_FAILED carrying the refunded generation', async () => {
    const { rg } = await sdk(500);
    const e = await caught(rg.run(VIDEO, { prompt: 'x', image: f.img.url('/missing.png') }));
    expect(e.code).toBe('GENERATION_FAILED');
    expect(e.status).toBe(0);
    expect(e.generation).toMatchObject({
      status: 'failed',
      refundedCents: e.generation!.costCents,
    });
    expect(e.generation!.error?.code).toBeTruthy();
    expect((await rg.me()).balanceCents).toBe(500);
  });

  it('wait() resolves only on a final status, reporting each state; timeoutMs gives WAIT_TIMEOUT with the last state', async () => {
    const { rg } = await sdk(500);
    const held = `/held/wait-${Date.now()}.png`;
    const g = await rg.generations.create(VIDEO, { prompt: 'x', image: f.img.url(held) });
    expect(g.status).toBe('queued');
    const timeout = await caught(rg.generations.wait(g.id, { timeoutMs: 1500 }));
    expect(timeout.code).toBe('WAIT_TIMEOUT');
    expect(timeout.generation?.status).toBe('queued');
    const heldRequests = async () =>
      Number(
        /^rendergate_held_requests (\d+)$/m.exec((await f.api.call('GET', '/metrics')).text)![1],
      );
    await waitFor(
      'the timed-out wait released by the server',
      async () => (await heldRequests()) === 0,
      { intervalMs: 50 },
    );
    const states: Generation[] = [];
    const waiting = rg.generations.wait(g.id, { onProgress: (x) => states.push(x) });
    let settled = false;
    void waiting.finally(() => {
      settled = true;
    });
    // the server holds the SDK's event stream (or a Prefer: wait request): the wait is under way
    // and must not have ended
    const streams = async () =>
      Number(
        /^rendergate_event_streams (\d+)$/m.exec((await f.api.call('GET', '/metrics')).text)![1],
      );
    await waitFor(
      'the wait held by the server',
      async () => (await heldRequests()) + (await streams()) > 0,
      { intervalMs: 50 },
    );
    expect(settled).toBe(false);
    f.img.release(held);
    const final = await waiting;
    expect(final.status).toBe('succeeded');
    expect(states.slice(0, -1).every((s) => s.status === 'queued')).toBe(true);
    expect((await rg.generations.get(g.id)).status).toBe('succeeded');
  });

  it("an aborted run() rejects with the signal's reason at once", async () => {
    const { rg } = await sdk(500);
    const held = `/held/abort-${Date.now()}.png`;
    const ctl = new AbortController();
    let id: string | undefined;
    const running = rg.run(
      VIDEO,
      { prompt: 'x', image: f.img.url(held) },
      {
        signal: ctl.signal,
        onProgress: (g) => {
          id ??= g.id;
          if (g.status === 'queued') ctl.abort();
        },
      },
    );
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(id).toMatch(/^gen_/);
    f.img.release(held);
  });

  it('lists every generation across pages, newest first, filtered by model and status', async () => {
    const { rg } = await sdk(500);
    const made: string[] = [];
    for (let i = 0; i < 5; i++)
      made.push((await rg.generations.create(TEXT, { text: `${story} ${i}` })).id);
    for (const id of made) await rg.generations.wait(id);
    const all = await rg.generations.list({ pageSize: 2 }).toArray();
    expect(all.map((g) => g.id)).toEqual([...made].reverse());
    let pages = 0;
    for await (const page of rg.generations.list({ pageSize: 2 }).pages()) {
      pages++;
      expect(page.data.length).toBeLessThanOrEqual(2);
    }
    expect(pages).toBe(3);
    const seen: string[] = [];
    for await (const g of rg.generations.list({ modelId: TEXT, status: 'succeeded', pageSize: 3 }))
      seen.push(g.id);
    expect(seen).toHaveLength(5);
    expect(await rg.generations.list({ modelId: VIDEO }).toArray()).toEqual([]);
  });

  it('create() with the same key twice is one generation and one charge; delete() removes it', async () => {
    const { rg } = await sdk(500);
    const a = await rg.generations.create(TEXT, { text: story }, { idempotencyKey: 'order-42' });
    const b = await rg.generations.create(TEXT, { text: story }, { idempotencyKey: 'order-42' });
    expect(b.id).toBe(a.id);
    expect((await rg.me()).balanceCents).toBe(500 - a.costCents);
    await rg.generations.wait(a.id);
    expect(await rg.generations.delete(a.id)).toEqual({ id: a.id, deleted: true });
    expect((await caught(rg.generations.get(a.id))).code).toBe('GENERATION_NOT_FOUND');
  });

  it('retries a create whose answer was lost after the server committed, without charging twice', async () => {
    const proxy = await dropProxy({ host: '127.0.0.1', port: Number(new URL(f.svc.base).port) });
    try {
      const { rg, accountId } = await sdk(500, {}, { baseUrl: proxy.base });
      proxy.dropNext(2);
      const g = await rg.generations.create(TEXT, { text: story });
      expect(proxy.dropped).toBe(2);
      const { rows } = await f.dbh.db.query(
        `SELECT count(*)::int AS n FROM generations WHERE account_id = $1`,
        [accountId],
      );
      expect(rows[0].n).toBe(1);
      expect((await rg.me()).balanceCents).toBe(500 - g.costCents);
      await rg.generations.wait(g.id);
      // A delete whose answer is lost is retried and still reports the deletion.
      proxy.dropNext(1);
      expect(await rg.generations.delete(g.id)).toEqual({ id: g.id, deleted: true });
      expect(proxy.dropped).toBe(3);
      await checkInvariants(f.dbh.db);
    } finally {
      await proxy.close();
    }
  });

  it('does not repeat a request it cannot repeat safely when its answer is lost', async () => {
    const proxy = await dropProxy({ host: '127.0.0.1', port: Number(new URL(f.svc.base).port) });
    try {
      const { rg } = await sdk(500, {}, { baseUrl: proxy.base });
      proxy.dropNext(1);
      const e = await caught(rg.webhookEndpoints.create({ url: 'https://example.com/hook' }));
      expect(e.code).toBe('NETWORK_ERROR');
      expect(proxy.dropped).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it('raises a typed RendergateError for each contract error', async () => {
    const { rg, key } = await sdk(100, { dailyCapCents: 40 });
    const bad = new Rendergate({
      apiKey: key + 'x',
      baseUrl: f.svc.base,
      fetch: checkedFetch(f.svc.base),
    });
    const e401 = await caught(bad.me());
    expect(e401).toMatchObject({ status: 401, code: 'API_KEY_INVALID' });
    expect(e401.requestId).toMatch(/\S/);
    const e400 = await caught(
      rg.quote(VIDEO, { prompt: 'x', image: 'ftp://x', duration: 7 } as never),
    );
    expect(e400).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
    expect(e400.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'inputs.image' }),
        expect.objectContaining({ field: 'inputs.duration' }),
      ]),
    );
    expect(await caught(rg.models.get('nobody/nothing'))).toMatchObject({
      status: 404,
      code: 'MODEL_NOT_FOUND',
    });
    expect(await caught(rg.generations.get('gen_0190f6f1c2a87c3e9a4e5b6d7c8e9f01'))).toMatchObject({
      status: 404,
      code: 'GENERATION_NOT_FOUND',
    });
    const e402 = await caught(
      rg.generations.create('rendergate/start-end-to-video', {
        prompt: 'x',
        image: f.img.url('/a.png'),
        last_image: f.img.url('/b.png'),
        duration: 10,
        resolution: '1080p',
      }),
    );
    expect(e402).toMatchObject({
      status: 402,
      code: 'INSUFFICIENT_BALANCE',
      details: [{ costCents: 125, balanceCents: 100 }],
    });
    await rg.generations.create(VIDEO, { prompt: 'x', image: f.img.url('/a.png') });
    const e409 = await caught(
      rg.generations.create(VIDEO, { prompt: 'x', image: f.img.url('/b.png') }),
    );
    expect(e409).toMatchObject({ status: 409, code: 'API_KEY_DAILY_CAP' });
    await rg.generations.create(TEXT, { text: 'one' }, { idempotencyKey: 'k-1' });
    expect(
      await caught(rg.generations.create(TEXT, { text: 'two' }, { idempotencyKey: 'k-1' })),
    ).toMatchObject({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
    const held = `/held/ready-${Date.now()}.png`;
    const { rg: rich } = await sdk(500);
    const queued = await rich.generations.create(VIDEO, { prompt: 'x', image: f.img.url(held) });
    expect(await caught(rich.generations.content(queued.id))).toMatchObject({
      status: 409,
      code: 'GENERATION_NOT_READY',
    });
    f.img.release(held);
    const { rg: slow } = await sdk(0, { rateLimitPerMinute: 1 }, { maxRetries: 0 });
    await slow.me();
    const e429 = await caught(slow.me());
    expect(e429).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(e429.retryAfter).toBeGreaterThan(0);
    const big = await caught(rich.quote(TEXT, { text: 'x'.repeat(1024 * 1024 + 1) }));
    expect(big).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    const { rg: gone, keyId } = await sdk(0);
    await f.api.admin('DELETE', `/keys/${keyId}`);
    expect(await caught(gone.me())).toMatchObject({ status: 401, code: 'API_KEY_REVOKED' });
    expect(() => new Rendergate({ apiKey: '', baseUrl: f.svc.base })).toThrow(RendergateError);
  });
});
