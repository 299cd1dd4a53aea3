// /mcp (docs/mcp.md) through the official SDK's own client over Streamable HTTP against the real
// server: the six tools answer /v1's objects, v1 errors are tool errors with their code, a
// repeated idempotencyKey charges once however many calls race, the key's cap, mode and rate
// limit bound the agent, and a request without a key is told to bring a bearer token.
import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serviceFixture } from '../../helpers/fixture.ts';

const f = serviceFixture({ role: 'api' }); // no worker: renders stay queued unless a test finishes them

const MODEL = 'rendergate/shot-list';
const INPUTS = { text: 'The tide turns. A gull lands.' };

async function agent(key: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${f.svc.base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'rendergate-test', version: '1.0.0' });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = (await client.callTool({ name, arguments: args })) as any;
    // the text content and the structured content are the same object
    expect(JSON.parse(r.content[0].text)).toEqual(r.structuredContent);
    return { error: r.isError === true, value: r.structuredContent };
  };
  return { client, transport, call };
}

it('answers 401 with WWW-Authenticate: Bearer without a key, and 405 to GET', async () => {
  const r = await fetch(`${f.svc.base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(r.status).toBe(401);
  expect(r.headers.get('www-authenticate')).toBe('Bearer');
  expect((await r.json()).code).toBe('API_KEY_MISSING');
  const a = await f.api.account(0);
  const g = await fetch(`${f.svc.base}/mcp`, { headers: { authorization: `Bearer ${a.key}` } });
  expect([g.status, g.headers.get('allow')]).toEqual([405, 'POST']);
});

it('lists the six tools and answers the objects of /v1', async () => {
  const a = await f.api.account(10_000);
  const { client, transport, call } = await agent(a.key);
  expect(transport.protocolVersion! >= '2025-06-18').toBe(true);
  expect(client.getServerVersion()?.name).toBe('rendergate');
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(
    [
      'create_generation',
      'get_generation',
      'get_model',
      'list_models',
      'quote',
      'wait_generation',
    ].sort(),
  );
  const models = await call('list_models');
  expect(models.value).toEqual((await f.api.call('GET', '/v1/models', { key: a.key })).json);
  const model = await call('get_model', { id: MODEL });
  const detail = await f.api.call('GET', `/v1/models/detail?id=${MODEL}`, { key: a.key });
  expect(model.value).toEqual(detail.json);
  const quote = await call('quote', { modelId: MODEL, inputs: INPUTS });
  const priced = await f.api.call('POST', '/v1/quote', {
    key: a.key,
    body: { modelId: MODEL, inputs: INPUTS },
  });
  expect(quote.value).toEqual(priced.json);
  const made = await call('create_generation', { modelId: MODEL, inputs: INPUTS });
  expect(made.value).toMatchObject({ status: 'queued', modelId: MODEL });
  const got = await call('get_generation', { id: made.value.id });
  const read = await f.api.call('GET', `/v1/generations/${made.value.id}`, { key: a.key });
  expect(got.value).toEqual(read.json);
  // wait_generation answers once the render is final, woken by its change
  const waiting = call('wait_generation', { id: made.value.id, seconds: 60 });
  await f.dbh.db.query(
    `UPDATE generations SET status = 'succeeded', text_output = 'done', completed_at = now(),
       started_at = now() WHERE id = $1`,
    [made.value.id],
  );
  expect((await waiting).value).toMatchObject({ status: 'succeeded', textOutput: 'done' });
  await client.close();
});

it('answers v1 errors as tool errors carrying the code', async () => {
  const a = await f.api.account(10_000);
  const b = await f.api.account(10_000);
  const { call, client } = await agent(a.key);
  const theirs = await f.api.call('POST', '/v1/generations', {
    key: b.key,
    body: { modelId: MODEL, inputs: INPUTS },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['get_model', { id: 'nobody/nothing' }, 'MODEL_NOT_FOUND'],
    ['get_model', {}, 'INVALID_INPUT'],
    ['quote', { modelId: 'nobody/nothing', inputs: {} }, 'INVALID_INPUT'],
    ['create_generation', { modelId: MODEL, inputs: { text: 42 } }, 'INVALID_INPUT'],
    [
      'create_generation',
      { modelId: MODEL, inputs: INPUTS, idempotencyKey: '' },
      'IDEMPOTENCY_KEY_REQUIRED',
    ],
    ['get_generation', { id: theirs.json.id }, 'GENERATION_NOT_FOUND'],
    ['wait_generation', { id: theirs.json.id, seconds: 61 }, 'INVALID_INPUT'],
  ];
  for (const [tool, args, code] of cases) {
    const r = await call(tool, args);
    expect([tool, r.error, r.value.code]).toEqual([tool, true, code]);
  }
  const poor = await f.api.account(0);
  const broke = await agent(poor.key);
  const r = await broke.call('create_generation', { modelId: MODEL, inputs: INPUTS });
  expect([r.error, r.value.code]).toEqual([true, 'INSUFFICIENT_BALANCE']);
  await client.close();
  await broke.client.close();
});

it('charges once for calls racing with one idempotencyKey, and keeps within the daily cap', async () => {
  const a = await f.api.account(10_000, { dailyCapCents: 3 });
  const agents = await Promise.all(Array.from({ length: 4 }, () => agent(a.key)));
  const idem = crypto.randomUUID();
  const made = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      agents[i % 4].call('create_generation', {
        modelId: MODEL,
        inputs: INPUTS,
        idempotencyKey: idem,
      }),
    ),
  );
  // each call either got the render or was told the key is still being processed (409)
  const ids = new Set(made.filter((m) => !m.error).map((m) => m.value.id));
  expect(ids.size).toBe(1);
  for (const m of made.filter((x) => x.error)) expect(m.value.code).toBe('IDEMPOTENCY_KEY_IN_USE');
  const me = await f.api.call('GET', '/v1/me', { key: a.key });
  const price = made.find((m) => !m.error)!.value.costCents as number;
  expect(me.json.balanceCents).toBe(10_000 - price);
  // the key's daily cap bounds the agent as any other client
  const over = [];
  for (let i = 0; i < 4; i++)
    over.push(await agents[0].call('create_generation', { modelId: MODEL, inputs: INPUTS }));
  expect(over.some((r) => r.error && r.value.code === 'API_KEY_DAILY_CAP')).toBe(true);
  const after = await f.api.call('GET', '/v1/me', { key: a.key });
  expect(after.json.key.spentTodayCents).toBeLessThanOrEqual(3);
  for (const g of agents) await g.client.close();
});

it("counts every call against the key's rate limit, and a test key sees test renders only", async () => {
  const a = await f.api.account(10_000, { rateLimitPerMinute: 6 });
  const { call } = await agent(a.key); // initialize and its notification: 2 requests
  let refused: unknown;
  try {
    for (let i = 0; i < 10; i++) await call('list_models');
  } catch (e) {
    refused = e;
  }
  expect(String(refused)).toMatch(/RATE_LIMITED/);
  const t = await f.api.admin('POST', `/accounts/${a.accountId}/keys`, { mode: 'test' });
  const live = await f.api.call('POST', '/v1/generations', {
    key: (await f.api.account(10_000)).key,
    body: { modelId: MODEL, inputs: INPUTS },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  const tester = await agent(t.key as string);
  const made = await tester.call('create_generation', { modelId: MODEL, inputs: INPUTS });
  expect(made.value.mode).toBe('test');
  const done = await tester.call('wait_generation', { id: made.value.id, seconds: 30 });
  expect(done.value.status).toBe('succeeded');
  // nothing charged (asked with the test key: the live one is over its limit)
  const me = await f.api.call('GET', '/v1/me', { key: t.key as string });
  expect(me.json.balanceCents).toBe(10_000);
  const hidden = await tester.call('get_generation', { id: live.json.id });
  expect(hidden.value.code).toBe('GENERATION_NOT_FOUND');
  await tester.client.close();
});
