// Test keys (docs/api.md "Test keys"): one test per rule. No worker runs in this service
// (RENDERGATE_WORKER_CONCURRENCY=0), so every result seen here was made by the service itself.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { freshDatabase } from '../../helpers/db.ts';
import { ADMIN, client, startTestService, type TestService } from '../../helpers/service.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { webhookReceiver } from '../../helpers/webhook-receiver.ts';
import { waitFor } from '../../helpers/wait.ts';
import { probe } from '../backends/helpers.ts';
import OpenAI from 'openai';
import { DEFAULT_CATALOG_PATH } from '../../../src/domain/catalog-load.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  // The default catalog plus an image model (its server never answers: a test render never asks it).
  const doc = parse(fs.readFileSync(DEFAULT_CATALOG_PATH, 'utf8'));
  // Examples name files beside the catalog file, which this copy (in a temporary folder) has not.
  for (const m of doc.models) delete m.examples;
  doc.models.push({
    id: 'acme/still',
    name: 'Still',
    kind: 'image',
    description: 'An image from a prompt.',
    output: { type: 'file', contentType: 'image/png' },
    fields: [
      { name: 'prompt', type: 'text', required: true, maxLength: 500 },
      { name: 'width', type: 'number', integer: true, minimum: 64, maximum: 2048, default: 640 },
      { name: 'height', type: 'number', integer: true, minimum: 64, maximum: 2048, default: 480 },
    ],
    price: '3',
    backend: { driver: 'cog', url: 'http://127.0.0.1:9' },
    timeLimitSeconds: 60,
    maxAttempts: 1,
  });
  // A chat model whose conversation is stored with its render (its server is never asked either).
  doc.models.push({
    id: 'acme/chat',
    name: 'Chat',
    kind: 'text',
    description: 'A chat model.',
    output: { type: 'text' },
    fields: [{ name: 'text', type: 'text', required: true, maxLength: 2000 }],
    price: '2',
    backend: {
      driver: 'openai',
      url: 'http://127.0.0.1:9',
      model: 'chat',
      messages: [{ role: 'user', content: 'text' }],
    },
    timeLimitSeconds: 20,
    maxAttempts: 1,
    openai: { input: 'text' },
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-cat-'));
  // The default models' examples name files beside the catalog file.
  fs.symlinkSync(
    path.join(path.dirname(DEFAULT_CATALOG_PATH), 'examples'),
    path.join(dir, 'examples'),
  );
  const catalog = path.join(dir, 'catalog.yaml');
  fs.writeFileSync(catalog, stringify(doc));
  dbh = await freshDatabase();
  svc = await startTestService(dbh.url, {
    env: { RENDERGATE_WORKER_CONCURRENCY: '0', RENDERGATE_CATALOG: catalog },
  });
  api = client(svc.base);
});
afterAll(async () => {
  await svc?.stop();
  await dbh?.drop();
});

const q = async (sql: string, values: unknown[] = []) => (await dbh.db.query(sql, values)).rows;
const I2V = 'rendergate/image-to-video';
const i2v = (extra: Record<string, unknown> = {}) => ({
  modelId: I2V,
  inputs: { prompt: 'a harbour', image: 'http://127.0.0.1:9/x.png', ...extra },
});
const text = (t: string) => ({ modelId: 'rendergate/shot-list', inputs: { text: t } });
let n = 0;
const create = (key: string, body: unknown, headers: Record<string, string> = {}) =>
  api.call('POST', '/v1/generations', {
    key,
    body,
    headers: { 'idempotency-key': `k-${++n}`, ...headers },
  });

/** An account with `cents`, a test key and a live key. */
async function account(cents: number, testKey: Record<string, unknown> = {}) {
  const a = await api.account(cents);
  const t = await api.admin('POST', `/accounts/${a.accountId}/keys`, { mode: 'test', ...testKey });
  return { ...a, live: a.key, test: t.key as string, testId: t.id as string };
}

const ledgerOf = (id: string) =>
  q('SELECT kind, amount_cents FROM ledger_entries WHERE account_id = $1 ORDER BY id', [id]);

describe('test keys', () => {
  it('are made by the admin API with mode test (rg_test_), shown in the key record and /v1/me; live by default', async () => {
    const a = await api.admin('POST', '/accounts', { email: 'modes@example.test' });
    const live = await api.admin('POST', `/accounts/${a.id}/keys`, {});
    const test = await api.admin('POST', `/accounts/${a.id}/keys`, { mode: 'test', name: 'ci' });
    expect(live).toMatchObject({
      mode: 'live',
      key: expect.stringMatching(/^rg_live_/),
      start: expect.stringMatching(/^rg_live_/),
    });
    expect(test).toMatchObject({
      mode: 'test',
      name: 'ci',
      key: expect.stringMatching(/^rg_test_[1-9A-HJ-NP-Za-km-z]{32,}$/),
    });
    expect((await api.call('GET', '/v1/me', { key: test.key })).json.key).toMatchObject({
      id: test.id,
      mode: 'test',
    });
    expect((await api.call('GET', '/v1/me', { key: live.key })).json.key.mode).toBe('live');
    for (const mode of ['sandbox', 1, true]) {
      const r = await api.call('POST', `/admin/v1/accounts/${a.id}/keys`, {
        key: ADMIN,
        body: { mode },
      });
      expect(r.status).toBe(400);
      expect(r.json.details).toEqual([{ field: 'mode', message: 'must be one of "live", "test"' }]);
    }
  });

  it('work at /openai/v1 too: a test chat completion is made by the service and charges nothing', async () => {
    const a = await account(0);
    const openai = new OpenAI({ apiKey: a.test, baseURL: `${svc.base}/openai/v1`, maxRetries: 0 });
    const done = await openai.chat.completions.create({
      model: 'rendergate/shot-list',
      messages: [{ role: 'user', content: 'The boat leaves the harbour at dawn.' }],
    });
    expect(done.choices[0].message.content).toMatch(/^\[test\]/);
    const g = await api.call('GET', `/v1/generations/${done.id}`, { key: a.test });
    expect(g.json).toMatchObject({
      status: 'succeeded',
      mode: 'test',
      textOutput: done.choices[0].message.content,
    });
    expect((await api.call('GET', `/v1/generations/${done.id}`, { key: a.live })).status).toBe(404);
    const failed = openai.chat.completions.create({
      model: 'rendergate/shot-list',
      messages: [{ role: 'user', content: 'rendergate:insufficient' }],
    });
    await expect(failed).rejects.toMatchObject({ status: 402, code: 'INSUFFICIENT_BALANCE' });
    // A driver: openai model's conversation is kept with its render, as a live one's is.
    const messages = [{ role: 'user' as const, content: 'Where does the boat go?' }];
    const chat = await openai.chat.completions.create({ model: 'acme/chat', messages });
    expect(chat.choices[0].message.content).toMatch(/^\[test\] acme\/chat/);
    expect(
      await q('SELECT messages FROM generation_messages WHERE generation_id = $1', [chat.id]),
    ).toEqual([{ messages }]);
    expect(await ledgerOf(a.accountId)).toEqual([]);
    expect((await api.call('GET', '/v1/me', { key: a.live })).json.balanceCents).toBe(0);
  });

  it('charge nothing: a render shows its price and mode test, and balance and ledger stay put', async () => {
    const a = await account(0);
    const quote = await api.call('POST', '/v1/quote', { key: a.test, body: i2v({ duration: 10 }) });
    const r = await create(a.test, i2v({ duration: 10 }));
    expect(r.status).toBe(202);
    expect(r.json).toMatchObject({
      status: 'queued',
      costCents: quote.json.costCents,
      mode: 'test',
    });
    expect(quote.json.costCents).toBeGreaterThan(0);
    const done = await api.waitFinal(a.test, r.json.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      costCents: quote.json.costCents,
      refundedCents: 0,
      mode: 'test',
    });
    const me = (await api.call('GET', '/v1/me', { key: a.test })).json;
    expect(me.balanceCents).toBe(0);
    expect(me.key.spentTodayCents).toBe(quote.json.costCents);
    expect(await ledgerOf(a.accountId)).toEqual([]);
  });

  it('leave ledger and balance unchanged after 100 test renders', async () => {
    const a = await account(500, { rateLimitPerMinute: 100_000 }); // 100 renders polled to the end
    const before = {
      ledger: await ledgerOf(a.accountId),
      me: (await api.call('GET', '/v1/me', { key: a.live })).json.balanceCents,
    };
    const made = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        create(a.test, i % 4 === 0 ? i2v({ duration: 5 }) : text(`shot ${i}: a harbour at dawn`)),
      ),
    );
    expect(made.map((r) => r.status)).toEqual(Array(100).fill(202));
    const finals = await Promise.all(made.map((r) => api.waitFinal(a.test, r.json.id)));
    expect(finals.filter((g) => g.status !== 'succeeded')).toEqual([]);
    expect(await ledgerOf(a.accountId)).toEqual(before.ledger);
    expect((await api.call('GET', '/v1/me', { key: a.live })).json.balanceCents).toBe(before.me);
    expect(before.me).toBe(500);
    await checkInvariants(dbh.db);
  });

  it("count their prices against the key's daily cap: 409 API_KEY_DAILY_CAP", async () => {
    const a = await account(0, { dailyCapCents: 100 });
    expect((await create(a.test, i2v({ duration: 10 }))).status).toBe(202); // 60
    const r = await create(a.test, i2v({ duration: 10 }));
    expect(r.status).toBe(409);
    expect(r.json.code).toBe('API_KEY_DAILY_CAP');
    expect(r.json.details[0]).toMatchObject({ capCents: 100, spentTodayCents: 60, costCents: 60 });
    expect((await create(a.test, i2v({ duration: 5 }))).status).toBe(202); // 30 more fits
    await checkInvariants(dbh.db);
  });

  it('make a video of the asked resolution and duration, within a second', async () => {
    const a = await account(0);
    const body = {
      modelId: 'rendergate/start-end-to-video',
      inputs: {
        prompt: 'dawn',
        image: 'http://127.0.0.1:9/a.png',
        last_image: 'http://127.0.0.1:9/b.png',
        duration: 3,
        resolution: '540p',
      },
    };
    const first = await api.waitFinal(a.test, (await create(a.test, body)).json.id);
    expect(first.contentType).toBe('video/mp4');
    // The file is encoded once per size and duration; then a test render is a copy.
    const r = await create(a.test, body, { prefer: 'wait=30' });
    expect(r.json.status).toBe('succeeded');
    expect(Date.parse(r.json.completedAt) - Date.parse(r.json.createdAt)).toBeLessThanOrEqual(1000);
    const file = await fetch(r.json.contentUrl, { headers: { authorization: `Bearer ${a.test}` } });
    expect(file.headers.get('content-type')).toBe('video/mp4');
    const tmp = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rg-tk-')), 'out.mp4');
    fs.writeFileSync(tmp, Buffer.from(await file.arrayBuffer()));
    const p = await probe(tmp);
    const video = p.streams.find((s) => s.codec_type === 'video')!;
    expect({ width: video.width, height: video.height }).toEqual({ width: 960, height: 540 });
    expect(Number(p.format.duration)).toBeCloseTo(3, 0);
  });

  it('make an image of the asked size, and text that begins [test]', async () => {
    const a = await account(0);
    const img = await api.waitFinal(
      a.test,
      (
        await create(a.test, {
          modelId: 'acme/still',
          inputs: { prompt: 'x', width: 320, height: 200 },
        })
      ).json.id,
    );
    expect(img).toMatchObject({ status: 'succeeded', contentType: 'image/png' });
    const bytes = Buffer.from(
      await (
        await fetch(img.contentUrl, { headers: { authorization: `Bearer ${a.test}` } })
      ).arrayBuffer(),
    );
    const sharp = (await import('sharp')).default;
    expect(await sharp(bytes).metadata()).toMatchObject({ format: 'png', width: 320, height: 200 });
    const t = await api.waitFinal(
      a.test,
      (await create(a.test, text('three shots of a harbour'))).json.id,
    );
    expect(t.status).toBe('succeeded');
    expect(t.textOutput).toMatch(/^\[test\] /);
  });

  it('fail a render whose prompt or text contains rendergate:fail (refunded, MODEL_FAILED)', async () => {
    const a = await account(0);
    for (const body of [i2v({ prompt: 'please rendergate:fail now' }), text('x rendergate:fail')]) {
      const g = await api.waitFinal(a.test, (await create(a.test, body)).json.id);
      expect(g).toMatchObject({
        status: 'refunded',
        mode: 'test',
        error: { code: 'MODEL_FAILED' },
      });
      expect(g.refundedCents).toBe(g.costCents);
    }
    expect((await api.call('GET', '/v1/me', { key: a.test })).json.key.spentTodayCents).toBe(0);
    expect(await ledgerOf(a.accountId)).toEqual([]);
  });

  it('answer 402 INSUFFICIENT_BALANCE to rendergate:insufficient, creating nothing', async () => {
    const a = await account(10_000);
    const body = i2v({ prompt: 'rendergate:insufficient' });
    const r = await create(a.test, body, { 'idempotency-key': 'short-1' });
    expect(r.status).toBe(402);
    expect(r.json.code).toBe('INSUFFICIENT_BALANCE');
    expect(r.json.details[0].costCents).toBe(30);
    expect((await api.call('GET', '/v1/generations', { key: a.test })).json.data).toEqual([]);
    expect((await api.call('GET', '/v1/me', { key: a.test })).json.key.spentTodayCents).toBe(0);
    // A refused create changed nothing: the same Idempotency-Key works for another body.
    expect((await create(a.test, i2v(), { 'idempotency-key': 'short-1' })).status).toBe(202);
  });

  it('see test renders only, and live keys see live renders only', async () => {
    const a = await account(1000);
    const t = (await create(a.test, i2v(), { 'idempotency-key': 'same' })).json;
    const l = (await create(a.live, i2v(), { 'idempotency-key': 'same' })).json;
    expect(l.id).not.toBe(t.id); // idempotency keys of the two modes are apart too
    expect(l.mode).toBeUndefined();
    await api.waitFinal(a.test, t.id);
    for (const [key, other] of [
      [a.live, t.id],
      [a.test, l.id],
    ]) {
      expect((await api.call('GET', `/v1/generations/${other}`, { key })).status).toBe(404);
      expect(
        (await api.call('GET', `/v1/generations/${other}`, { key, headers: { prefer: 'wait=1' } }))
          .status,
      ).toBe(404);
      expect((await api.call('GET', `/v1/generations/${other}/content`, { key })).status).toBe(404);
      expect((await api.call('POST', `/v1/generations/${other}/cancel`, { key })).status).toBe(404);
      expect((await api.call('DELETE', `/v1/generations/${other}`, { key })).status).toBe(404);
    }
    expect(
      (await api.call('GET', '/v1/generations', { key: a.live })).json.data.map((g: any) => g.id),
    ).toEqual([l.id]);
    expect(
      (await api.call('GET', '/v1/generations', { key: a.test })).json.data.map((g: any) => g.id),
    ).toEqual([t.id]);
  });

  it('replay and refuse Idempotency-Keys, validate inputs and limit the rate as live keys do', async () => {
    const a = await account(0, { rateLimitPerMinute: 8 });
    const first = await create(a.test, i2v(), { 'idempotency-key': 'replay-me' });
    const again = await create(a.test, i2v(), { 'idempotency-key': 'replay-me' });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.id).toBe(first.json.id);
    expect(
      (await create(a.test, i2v({ duration: 10 }), { 'idempotency-key': 'replay-me' })).json.code,
    ).toBe('IDEMPOTENCY_KEY_REUSED');
    const bad = await create(a.test, {
      modelId: I2V,
      inputs: { prompt: 'x', image: 'ftp://x', duration: 7 },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.details.map((d: any) => d.field).sort()).toEqual([
      'inputs.duration',
      'inputs.image',
    ]);
    expect(
      (await api.call('POST', '/v1/generations', { key: a.test, body: i2v() })).json.code,
    ).toBe('IDEMPOTENCY_KEY_REQUIRED');
    let limited;
    for (let i = 0; i < 8 && !limited; i++) {
      const r = await api.call('GET', '/v1/me', { key: a.test });
      if (r.status === 429) limited = r;
    }
    expect(limited?.json.code).toBe('RATE_LIMITED');
  });

  it('record a render whose result is at hand in its create: answered queued, final, one row version', async () => {
    const a = await account(0);
    const first = await create(a.test, i2v({ duration: 10 }));
    await api.waitFinal(a.test, first.json.id); // its file made and stored: at hand from now on
    const r = await create(a.test, i2v({ duration: 10 }), { 'idempotency-key': 'final-1' });
    expect(r.status).toBe(202);
    expect(r.json).toMatchObject({ status: 'queued', queuePosition: 1, mode: 'test' });
    // Read at once, without waiting: the row was committed final.
    const g = (await api.call('GET', `/v1/generations/${r.json.id}`, { key: a.test })).json;
    expect(g).toMatchObject({ status: 'succeeded', progress: 1, contentType: 'video/mp4' });
    expect(new Date(g.startedAt).getTime()).toBe(new Date(g.completedAt).getTime());
    expect(new Date(g.completedAt) >= new Date(g.createdAt)).toBe(true);
    expect(new Date(g.expiresAt) > new Date()).toBe(true);
    // Inserted final and never updated: the row version is the create's, its idempotency key's too.
    const [row] = await q(
      `SELECT g.xmin::text = i.xmin::text AS one_write FROM generations g
       JOIN idempotency_keys i ON i.generation_id = g.id WHERE g.id = $1`,
      [r.json.id],
    );
    expect(row.one_write).toBe(true);
    // The shared stored file, served as the contract says.
    const file = await fetch(g.contentUrl, { headers: { authorization: `Bearer ${a.test}` } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('video/mp4');
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(Number(file.headers.get('content-length'))).toBe(bytes.length);
    const firstFile = await fetch(`${svc.base}/v1/generations/${first.json.id}/content`, {
      headers: { authorization: `Bearer ${a.test}` },
    });
    expect(file.headers.get('etag')).toBe(firstFile.headers.get('etag'));
    expect(Buffer.from(await firstFile.arrayBuffer()).equals(bytes)).toBe(true);
    expect(
      (await fetch(g.contentUrl, { headers: { authorization: `Bearer ${a.live}` } })).status,
    ).toBe(404);
    // A replay answers the first answer; the day counts both renders; no money moved.
    const again = await create(a.test, i2v({ duration: 10 }), { 'idempotency-key': 'final-1' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toEqual(r.json);
    const me = (await api.call('GET', '/v1/me', { key: a.test })).json;
    expect(me.key.spentTodayCents).toBe(2 * r.json.costCents);
    expect(me.balanceCents).toBe(0);
    expect(await ledgerOf(a.accountId)).toEqual([]);
    await checkInvariants(dbh.db);
  });

  it('make one generation of 20 concurrent creates with one Idempotency-Key; replays answer its 202', async () => {
    const a = await account(0, { rateLimitPerMinute: 100_000 });
    const body = text('one take of the harbour');
    const rs = await Promise.all(
      Array.from({ length: 20 }, () => create(a.test, body, { 'idempotency-key': 'together' })),
    );
    const refused = rs.filter((r) => r.status !== 202);
    expect(refused.map((r) => [r.status, r.json.code])).toEqual(
      refused.map(() => [409, 'IDEMPOTENCY_KEY_IN_USE']),
    );
    const answered = rs.filter((r) => r.status === 202);
    expect(new Set(answered.map((r) => r.json.id)).size).toBe(1);
    const originals = answered.filter((r) => r.headers.get('idempotent-replayed') !== 'true');
    expect(originals).toHaveLength(1);
    for (const r of answered) expect(r.json).toEqual(originals[0].json);
    const rows = await q('SELECT id, status, text_output FROM generations WHERE account_id = $1', [
      a.accountId,
    ]);
    expect(rows).toEqual([
      {
        id: originals[0].json.id,
        status: 'succeeded',
        text_output: expect.stringMatching(/^\[test\]/),
      },
    ]);
    const again = await create(a.test, body, { 'idempotency-key': 'together' });
    expect(again.json).toEqual(originals[0].json);
    const me = (await api.call('GET', '/v1/me', { key: a.test })).json;
    expect(me.key.spentTodayCents).toBe(originals[0].json.costCents);
    await checkInvariants(dbh.db);
  });

  it('are recorded after their create where a test endpoint takes their started or succeeded events', async () => {
    const a = await account(0);
    const rx = await webhookReceiver();
    try {
      // Neither a test endpoint of other events nor a live endpoint of these is owed an event.
      const other = await api.call('POST', '/v1/webhook-endpoints', {
        key: a.test,
        body: { url: rx.url('/refunds'), events: ['generation.refunded'] },
      });
      expect(other.status).toBe(201);
      const live = await api.call('POST', '/v1/webhook-endpoints', {
        key: a.live,
        body: { url: rx.url('/live'), events: ['generation.started', 'generation.succeeded'] },
      });
      expect(live.status).toBe(201);
      const oneWrite = async (id: string) =>
        (
          await q(
            `SELECT g.xmin::text = i.xmin::text AS one FROM generations g
             JOIN idempotency_keys i ON i.generation_id = g.id WHERE g.id = $1`,
            [id],
          )
        )[0].one;
      // No endpoint takes those events: created final, no event owed.
      const quiet = (await create(a.test, text('quiet'))).json;
      expect((await api.waitFinal(a.test, quiet.id)).status).toBe('succeeded');
      expect(await oneWrite(quiet.id)).toBe(true);
      const ep = await api.call('POST', '/v1/webhook-endpoints', {
        key: a.test,
        body: { url: rx.url('/done'), events: ['generation.succeeded'] },
      });
      expect(ep.json.mode).toBe('test');
      rx.secret('/done', ep.json.secret);
      // Now one does: the render is recorded by a change of its own, which writes the event.
      const heard = (await create(a.test, text('heard'))).json;
      expect((await api.waitFinal(a.test, heard.id)).status).toBe('succeeded');
      expect(await oneWrite(heard.id)).toBe(false);
      await waitFor('the succeeded event', () =>
        rx.received.some((x) => x.body.data.id === heard.id),
      );
      expect(rx.received.map((x) => [x.body.type, x.body.data.id, x.body.livemode])).toEqual([
        ['generation.succeeded', heard.id, false],
      ]);
    } finally {
      await rx.close();
    }
  });

  it('hold a create with Prefer: wait until the render is final', async () => {
    const a = await account(0);
    const r = await create(a.test, text('a harbour'), { prefer: 'wait=30' });
    expect(r.status).toBe(202);
    expect(r.headers.get('preference-applied')).toBe('wait=30');
    expect(r.json.status).toBe('succeeded');
  });

  it('take uploads as image inputs', async () => {
    const a = await account(0);
    const sharp = (await import('sharp')).default;
    const png = await sharp({
      create: { width: 64, height: 48, channels: 3, background: '#336699' },
    })
      .png()
      .toBuffer();
    const up = await fetch(`${svc.base}/v1/uploads`, {
      method: 'POST',
      body: png,
      headers: { authorization: `Bearer ${a.test}`, 'content-type': 'image/png' },
    }).then((r) => r.json());
    const g = await api.waitFinal(a.test, (await create(a.test, i2v({ image: up.url }))).json.id);
    expect(g.status).toBe('succeeded');
  });

  it("send webhook events with livemode false to test endpoints only; a live render's, livemode true, to live ones only", async () => {
    const a = await account(1000);
    const rx = await webhookReceiver();
    try {
      const liveEp = await api.call('POST', '/v1/webhook-endpoints', {
        key: a.live,
        body: { url: rx.url('/live') },
      });
      rx.secret('/live', liveEp.json.secret);
      const testEp = await api.call('POST', '/v1/webhook-endpoints', {
        key: a.test,
        body: { url: rx.url('/test') },
      });
      rx.secret('/test', testEp.json.secret);
      expect([liveEp.json.mode, testEp.json.mode]).toEqual(['live', 'test']);
      const t = (await create(a.test, text('hello'))).json;
      const l = (await create(a.live, text('hello'))).json;
      await api.call('POST', `/v1/generations/${l.id}/cancel`, { key: a.live }); // no worker here: cancelled while waiting
      // Three events in all: the test render's two and the live one's one, in any order.
      await waitFor('the three events', () => rx.received.length >= 3);
      const byGen = (id: string) =>
        rx.received
          .filter((x) => x.body.data.id === id)
          .map((x) => [x.path, x.body.type, x.body.livemode, x.verified])
          .sort();
      expect(byGen(t.id)).toEqual([
        ['/test', 'generation.started', false, true],
        ['/test', 'generation.succeeded', false, true],
      ]);
      expect(byGen(l.id)).toEqual([['/live', 'generation.refunded', true, true]]);
      // Nothing else was sent to either, and each endpoint's deliveries say the same.
      const ds = async (key: string, id: string) =>
        (await api.call('GET', `/v1/webhook-endpoints/${id}/deliveries`, { key })).json.data
          .map((d: any) => [d.type, d.generationId])
          .sort();
      expect(await ds(a.test, testEp.json.id)).toEqual([
        ['generation.started', t.id],
        ['generation.succeeded', t.id],
      ]);
      expect(await ds(a.live, liveEp.json.id)).toEqual([['generation.refunded', l.id]]);
      expect(rx.received).toHaveLength(3);
    } finally {
      await rx.close();
    }
  });
});
