// Contract test with a third-party validator: every operation of the served OpenAPI document is driven
// through Prism's validating proxy (@stoplight/prism-cli, `prism proxy`) in front of the real service.
// Prism checks each request and each answer (status, headers, body) against the document and reports
// what differs in its `sl-violations` header; any violation of an answer fails the test, and so does a
// violation of a request meant to be valid. (Prism's proxy forwards a request body as text, which
// corrupts a binary one: the one binary upload goes to the service directly and its answer is checked
// by the in-repository checker, test/helpers/openapi-check.ts.)
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { freePort } from '../../helpers/service.ts';
import { checkerFor } from '../../helpers/openapi-check.ts';
import { listen } from '../../fakes/http-util.ts';
import { waitFor } from '../../helpers/wait.ts';

const f = serviceFixture();
let prism: ChildProcess;
let base = '';
let log = '';
/** Between Prism and the service: relays as it is, or (to show the check can fail) drops a field. */
let tamper = false;
let relay: Awaited<ReturnType<typeof listen>>;

async function forward(req: http.IncomingMessage, res: http.ServerResponse) {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter(
      ([k]) => !['host', 'connection', 'content-length'].includes(k),
    ),
  ) as Record<string, string>;
  const up = await fetch(f.svc.base + req.url, {
    method: req.method,
    headers,
    body: chunks.length ? Buffer.concat(chunks) : undefined,
    redirect: 'manual',
  });
  let body = Buffer.from(await up.arrayBuffer());
  if (tamper && req.url === '/v1/me') {
    const { balanceCents: _, ...rest } = JSON.parse(body.toString());
    body = Buffer.from(JSON.stringify(rest));
  }
  const out: Record<string, string> = {};
  up.headers.forEach((v, k) => {
    if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(k))
      out[k] = v;
  });
  res.writeHead(up.status, { ...out, 'content-length': String(body.length) }).end(body);
}

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-prism-'));
  const doc = path.join(dir, 'openapi.json');
  fs.writeFileSync(doc, await (await fetch(`${f.svc.base}/v1/openapi.json`)).text());
  relay = await listen((req, res) => {
    forward(req, res).catch(() => res.destroy());
  });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const bin = path.resolve(import.meta.dirname, '../../../node_modules/.bin/prism');
  prism = spawn(
    bin,
    ['proxy', doc, relay.base, '-p', String(port), '-h', '127.0.0.1', '-v', 'error'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  prism.stdout!.on('data', (d: Buffer) => {
    log += d.toString();
  });
  prism.stderr!.on('data', (d: Buffer) => {
    log += d.toString();
  });
  await waitFor(
    `Prism listening (${log})`,
    async () => (await fetch(`${base}/v1/openapi.json`).catch(() => null))?.status === 200,
    { timeoutMs: 60_000 },
  );
}, 90_000);

afterAll(async () => {
  prism?.kill();
  await relay?.close();
});

const violations: string[] = [];
const seen = new Set<string>();

/** One request through Prism; its violations (if any) are collected with the operation's name. */
async function call(
  method: string,
  p: string,
  o: {
    key?: string;
    json?: unknown;
    headers?: Record<string, string>;
    op: string;
    invalid?: boolean;
  },
) {
  const headers: Record<string, string> = { ...o.headers };
  if (o.key) headers.authorization = `Bearer ${o.key}`;
  let body: string | undefined;
  if (o.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(o.json);
  }
  const res = await fetch(base + p, { method, headers, body });
  const text = await res.text();
  const v = res.headers.get('sl-violations');
  // A request sent invalid on purpose (no key, bad inputs) is expected to violate the document.
  const found = (v ? (JSON.parse(v) as { location: string[] }[]) : []).filter(
    (x) => !o.invalid || x.location[0] !== 'request',
  );
  if (found.length > 0) violations.push(`${method} ${p} → ${res.status}: ${JSON.stringify(found)}`);
  seen.add(o.op);
  return {
    status: res.status,
    headers: res.headers,
    text,
    json: /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : undefined,
  };
}

it("every operation, through Prism's validating proxy, matches the document", async () => {
  const { key } = await f.api.account(10_000);
  const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
  const text = {
    modelId: 'rendergate/shot-list',
    inputs: { text: 'The boat leaves the harbour at dawn.' },
  };
  await call('GET', '/v1/openapi.json', { op: 'getOpenApi' });
  await call('GET', '/v1/me', { key, op: 'getMe' });
  expect((await call('GET', '/v1/me', { op: 'getMe', invalid: true })).status).toBe(401);
  await call('GET', '/v1/models', { key, op: 'listModels' });
  await call('GET', '/v1/usage?groupBy=model', { key, op: 'getUsage' });
  await call('GET', '/v1/usage?groupBy=planet', { key, op: 'getUsage', invalid: true });
  await call('GET', '/v1/models/detail?id=rendergate/shot-list', { key, op: 'getModel' });
  await call('GET', '/v1/models/detail?id=nope/none', { key, op: 'getModel', invalid: true });
  await call('POST', '/v1/quote', { key, json: text, op: 'createQuote' });
  expect(
    (
      await call('POST', '/v1/quote', {
        key,
        json: { modelId: 'rendergate/shot-list', inputs: {} },
        op: 'createQuote',
        invalid: true,
      })
    ).status,
  ).toBe(400);
  const made = await call('POST', '/v1/generations', {
    key,
    json: text,
    headers: { ...idem(), prefer: 'wait=30' },
    op: 'createGeneration',
  });
  expect(made.json.status).toBe('succeeded');
  await call('GET', '/v1/generations?limit=5', { key, op: 'listGenerations' });
  await call('GET', `/v1/generations/${made.json.id}`, { key, op: 'getGeneration' });
  // the render's live events: a text render ends soon, and its stream with it
  const events = await call('GET', `/v1/generations/${made.json.id}/events`, {
    key,
    headers: { accept: 'text/event-stream' },
    op: 'streamGenerationEvents',
  });
  expect(events.text).toContain('event: generation');
  expect(
    (await call('POST', `/v1/generations/${made.json.id}/cancel`, { key, op: 'cancelGeneration' }))
      .status,
  ).toBe(409);
  await call('GET', `/v1/generations/${made.json.id}/content`, { key, op: 'getGenerationContent' });

  const png = await sharp({
    create: { width: 320, height: 180, channels: 3, background: { r: 200, g: 90, b: 30 } },
  })
    .png()
    .toBuffer();
  const upRes = await fetch(`${f.svc.base}/v1/uploads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' },
    body: png,
  });
  const up = {
    status: upRes.status,
    text: await upRes.text(),
    json: {} as { id: string; url: string },
  };
  up.json = JSON.parse(up.text);
  expect(up.status, up.text).toBe(201);
  expect(
    (await checkerFor(f.svc.base)).check('POST', '/v1/uploads', up.status, upRes.headers, up.text),
  ).toEqual([]);
  seen.add('createUpload');
  await call('GET', `/v1/uploads/${up.json.id}`, { key, op: 'getUpload' });
  await call('GET', '/v1/uploads?limit=5', { key, op: 'listUploads' });
  const video = await call('POST', '/v1/generations', {
    key,
    headers: { ...idem(), prefer: 'wait=60' },
    op: 'createGeneration',
    json: {
      modelId: 'rendergate/image-to-video',
      inputs: { prompt: 'a slow push-in', image: up.json.url },
    },
  });
  expect(video.json.status).toBe('succeeded');
  const content = await call('GET', `/v1/generations/${video.json.id}/content`, {
    key,
    op: 'getGenerationContent',
  });
  await call('GET', `/v1/generations/${video.json.id}/content`, {
    key,
    headers: { range: 'bytes=0-99' },
    op: 'getGenerationContent',
  });
  const etag = content.headers.get('etag')!;
  expect(
    (
      await call('GET', `/v1/generations/${video.json.id}/content`, {
        key,
        headers: { 'if-none-match': `W/${etag}` },
        op: 'getGenerationContent',
      })
    ).status,
  ).toBe(304);
  await call('DELETE', `/v1/generations/${video.json.id}`, { key, op: 'deleteGeneration' });
  await call('DELETE', `/v1/uploads/${up.json.id}`, { key, op: 'deleteUpload' });

  const hook = await call('POST', '/v1/webhook-endpoints', {
    key,
    json: { url: 'https://hooks.example.com/rg' },
    op: 'createWebhookEndpoint',
  });
  await call('GET', '/v1/webhook-endpoints', { key, op: 'listWebhookEndpoints' });
  await call('GET', `/v1/webhook-endpoints/${hook.json.id}`, { key, op: 'getWebhookEndpoint' });
  await call('GET', `/v1/webhook-endpoints/${hook.json.id}/deliveries`, {
    key,
    op: 'listWebhookDeliveries',
  });
  await call('DELETE', `/v1/webhook-endpoints/${hook.json.id}`, {
    key,
    op: 'deleteWebhookEndpoint',
  });

  await call('GET', '/openai/v1/models', { key, op: 'openaiListModels' });
  await call('GET', '/openai/v1/models/rendergate/shot-list', { key, op: 'openaiGetModel' });
  await call('GET', '/openai/v1/models/nope/none', { key, op: 'openaiGetModel', invalid: true });
  const chat = {
    model: 'rendergate/shot-list',
    messages: [{ role: 'user', content: 'Two shots of a harbour.' }],
  };
  expect(
    (
      await call('POST', '/openai/v1/chat/completions', {
        key,
        json: chat,
        op: 'openaiCreateChatCompletion',
      })
    ).json.object,
  ).toBe('chat.completion');
  const streamed = await call('POST', '/openai/v1/chat/completions', {
    key,
    json: { ...chat, stream: true },
    headers: idem(),
    op: 'openaiCreateChatCompletion',
  });
  expect(streamed.text.trim().endsWith('data: [DONE]')).toBe(true);
  expect(
    (
      await call('POST', '/openai/v1/chat/completions', {
        key,
        json: { ...chat, model: 'nope/none' },
        op: 'openaiCreateChatCompletion',
        invalid: true,
      })
    ).status,
  ).toBe(404);
  expect(
    (
      await call('POST', '/openai/v1/chat/completions', {
        key,
        json: { ...chat, n: 2 },
        op: 'openaiCreateChatCompletion',
        invalid: true,
      })
    ).status,
  ).toBe(400);
  expect(
    (await call('GET', '/openai/v1/models', { op: 'openaiListModels', invalid: true })).status,
  ).toBe(401);
  const asked = { model: 'rendergate/shot-list', input: 'Two shots of a harbour.' };
  expect(
    (await call('POST', '/openai/v1/responses', { key, json: asked, op: 'openaiCreateResponse' }))
      .json.object,
  ).toBe('response');
  const told = await call('POST', '/openai/v1/responses', {
    key,
    json: { ...asked, stream: true },
    headers: idem(),
    op: 'openaiCreateResponse',
  });
  expect(told.text).toContain('event: response.completed');

  // Stripe's own endpoint: this service has no Stripe configured, so it is the document's 404 (the
  // signed paths are driven by test/integration/billing/topups.test.ts).
  expect(
    (
      await call('POST', '/webhooks/stripe', {
        json: { id: 'evt_1', type: 'ping' },
        op: 'receiveStripeEvent',
        invalid: true,
      })
    ).status,
  ).toBe(404);

  // Every operation of the document was driven.
  const doc = await (await fetch(`${f.svc.base}/v1/openapi.json`)).json();
  const ops = Object.values(doc.paths).flatMap((item) =>
    Object.values(item as Record<string, { operationId: string }>).map((op) => op.operationId),
  );
  expect([...seen].sort()).toEqual(ops.sort());
  expect(violations.join('\n')).toBe('');
}, 180_000);

it('fails on a mismatch: an answer missing a required field is reported', async () => {
  const { key } = await f.api.account(0);
  tamper = true;
  try {
    const r = await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.headers.get('sl-violations') ?? '[]')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          location: ['response', 'body'],
          severity: 'Error',
          message: expect.stringMatching(/balanceCents/),
        }),
      ]),
    );
  } finally {
    tamper = false;
  }
});
