// /openai/v1 through OpenAI's own SDK (the `openai` npm package) against the real service: the model
// list, completions that are generations (same text, same charge as the quote), streams ending in
// [DONE], errors as the SDK's typed errors, the SDK's retry after a lost answer charging once, and a
// `driver: openai` model whose stream passes through from a fake vLLM (test/fakes/openai.ts) as it
// streams.
import crypto from 'node:crypto';
import http from 'node:http';
import OpenAI from 'openai';
import pg from 'pg';
import { expect, it, vi } from 'vitest';
import { chatFake, type ChatFake } from '../../fakes/openai.ts';
import { dropProxy } from '../../helpers/drop-proxy.ts';
import { waitFor } from '../../helpers/wait.ts';
import { LiveText } from '../../../src/queue/live-text.ts';
import { remoteFixture, textModel, videoModel } from '../remote/harness.ts';

let chat: ChatFake;
const SHOT_LIST = {
  id: 'rendergate/shot-list',
  name: 'Shot list',
  kind: 'text',
  description: 'The built-in text model.',
  output: { type: 'text' },
  fields: [
    { name: 'text', type: 'text', required: true, maxLength: 20000 },
    {
      name: 'mode',
      type: 'enum',
      values: ['summary', 'keywords', 'shot_list'],
      default: 'summary',
    },
    { name: 'max_items', type: 'number', integer: true, minimum: 1, maximum: 20, default: 5 },
  ],
  price: "1 + size(text) / 5000 + (mode == 'shot_list' ? 1 : 0)",
  backend: { driver: 'local', renderer: 'shot-list' },
  timeLimitSeconds: 30,
  maxAttempts: 3,
  openai: { input: 'text' },
};
const f = remoteFixture({
  before: async () => {
    chat = await chatFake();
    process.env.RG_TEST_VLLM_KEY = chat.apiKey;
  },
  models: () => [
    SHOT_LIST,
    textModel('acme/qwen', {
      driver: 'openai',
      url: chat.base,
      model: 'qwen2.5-7b-instruct',
      apiKey: '${env:RG_TEST_VLLM_KEY}',
      messages: [{ role: 'user', content: 'text' }],
    }),
    videoModel('acme/video', { driver: 'local', renderer: 'image-to-video' }),
  ],
  after: async () => {
    await chat.close();
    delete process.env.RG_TEST_VLLM_KEY;
  },
});

const sdk = (apiKey = f.key, baseURL = `${f.svc.base}/openai/v1`) =>
  new OpenAI({ apiKey, baseURL, maxRetries: 2 });
const TEXT =
  'A fox crosses a frozen river at dawn. The ice cracks. It leaps to the far bank and looks back.';

async function generation(id: string, key = f.key) {
  const r = await f.api.call('GET', `/v1/generations/${id}`, { key });
  expect(r.status).toBe(200);
  return r.json;
}

it("lists the catalog's text models, and only those", async () => {
  const ids = [];
  for await (const m of sdk().models.list()) ids.push(m);
  expect(ids.map((m) => m.id)).toEqual(['rendergate/shot-list', 'acme/qwen']);
  expect(ids[0]).toMatchObject({ object: 'model', owned_by: 'rendergate' });
  expect(typeof ids[0].created).toBe('number');
  expect((await sdk().models.retrieve('acme/qwen')).id).toBe('acme/qwen');
});

it('a completion is a generation: its content is the textOutput, its charge the quote', async () => {
  const { key } = await f.api.account(500);
  const quote = await f.api.call('POST', '/v1/quote', {
    key,
    body: { modelId: 'rendergate/shot-list', inputs: { text: TEXT } },
  });
  const c = await sdk(key).chat.completions.create({
    model: 'rendergate/shot-list',
    messages: [
      { role: 'system', content: 'ignored' },
      { role: 'user', content: TEXT },
    ],
  });
  expect(c.object).toBe('chat.completion');
  const g = await generation(c.id, key);
  expect(g.status).toBe('succeeded');
  expect(c.choices[0].message.content).toBe(g.textOutput);
  expect(c.choices[0].message.content!.length).toBeGreaterThan(0);
  expect(g.inputs).toMatchObject({ text: TEXT });
  expect(g.costCents).toBe(quote.json.costCents);
  const me = await f.api.call('GET', '/v1/me', { key });
  expect(me.json.balanceCents).toBe(500 - quote.json.costCents);
});

it('a stream: chat.completion.chunk events whose text is the textOutput, ending in data: [DONE]', async () => {
  const s = await sdk().chat.completions.create({
    model: 'rendergate/shot-list',
    messages: [{ role: 'user', content: TEXT }],
    stream: true,
  });
  let text = '';
  let id = '';
  let finish: string | null = null;
  for await (const c of s) {
    expect(c.object).toBe('chat.completion.chunk');
    id = c.id;
    text += c.choices[0]?.delta.content ?? '';
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  expect(finish).toBe('stop');
  expect(text).toBe((await generation(id)).textOutput);
  // The raw stream, as any SSE client reads it: its last event is [DONE].
  const res = await fetch(`${f.svc.base}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${f.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'rendergate/shot-list',
      messages: [{ role: 'user', content: 'Two shots.' }],
      stream: true,
    }),
  });
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events = (await res.text()).trim().split('\n\n');
  expect(events.at(-1)).toBe('data: [DONE]');
});

it("errors are the SDK's typed errors with OpenAI's body: 401, 402, 404, 400 naming the parameter", async () => {
  const err = async (p: Promise<unknown>) =>
    p.then(
      () => {
        throw new Error('expected an error');
      },
      (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
    );
  const msg = [{ role: 'user' as const, content: 'hi' }];
  const e401 = await err(
    sdk('rg_live_not_a_key').chat.completions.create({
      model: 'rendergate/shot-list',
      messages: msg,
    }),
  );
  expect(e401).toBeInstanceOf(OpenAI.AuthenticationError);
  expect(e401.status).toBe(401);
  const broke = await f.api.account(0);
  const e402 = await err(
    sdk(broke.key).chat.completions.create({ model: 'rendergate/shot-list', messages: msg }),
  );
  expect(e402).toBeInstanceOf(OpenAI.APIError);
  expect([e402.status, e402.code, e402.type]).toEqual([
    402,
    'INSUFFICIENT_BALANCE',
    'insufficient_quota',
  ]);
  for (const model of ['nope/none', 'acme/video']) {
    const e404 = await err(sdk().chat.completions.create({ model, messages: msg }));
    expect(e404).toBeInstanceOf(OpenAI.NotFoundError);
    expect([e404.code, e404.param]).toEqual(['MODEL_NOT_FOUND', 'model']);
  }
  const bad: [Record<string, unknown>, string][] = [
    [{ messages: [{ role: 'system', content: 'no user' }] }, 'messages'],
    [{ n: 2 }, 'n'],
    [{ tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] }, 'tools'],
    [
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }],
          },
        ],
      },
      'messages[0].content[0]',
    ],
  ];
  for (const [over, param] of bad) {
    const e = await err(
      sdk().chat.completions.create({
        model: 'rendergate/shot-list',
        messages: msg,
        ...over,
      } as never),
    );
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect([e.param, e.code, e.type]).toEqual([param, 'INVALID_INPUT', 'invalid_request_error']);
  }
  // Nothing was charged for any of them.
  expect((await f.api.call('GET', '/v1/me', { key: broke.key })).json.balanceCents).toBe(0);
});

it("a render the model server fails is 400 with OpenAI's body and the generation's code, refunded, not retried by the SDK", async () => {
  const { key, accountId } = await f.api.account(500);
  const before = chat.requests.length;
  chat.script.push({ kind: 'error-event' }); // the server's own error event: MODEL_FAILED, final
  // No Idempotency-Key: a retry by the SDK would be a second render (and the fake's next answer is a
  // success), so one generation shows that the SDK took the answer as final.
  const e = await sdk(key)
    .chat.completions.create({
      model: 'acme/qwen',
      messages: [{ role: 'user', content: 'A fox.' }],
    })
    .then(
      () => {
        throw new Error('expected an error');
      },
      (err: unknown) => err as InstanceType<typeof OpenAI.APIError>,
    );
  // 400: the one status no OpenAI client retries (src/http/openai/answer.ts); `type` says whose fault.
  expect(e).toBeInstanceOf(OpenAI.BadRequestError);
  expect([e.status, e.code, e.type, e.param]).toEqual([400, 'MODEL_FAILED', 'server_error', null]);
  expect(e.headers?.get('x-should-retry')).toBe('false');
  expect(e.message).toMatch(/failed \(MODEL_FAILED\)/);
  expect(chat.requests.length - before).toBe(1);
  const gens = await f.dbh.db.query(
    'SELECT id, status, error_code FROM generations WHERE account_id = $1',
    [accountId],
  );
  expect(gens.rows).toEqual([
    expect.objectContaining({ status: 'failed', error_code: 'MODEL_FAILED' }),
  ]);
  expect((await generation(gens.rows[0].id, key)).refundedCents).toBeGreaterThan(0);
  expect((await f.api.call('GET', '/v1/me', { key })).json.balanceCents).toBe(500);
});

it("the SDK's own retry after a lost answer makes one generation and one charge", async () => {
  const { key, accountId } = await f.api.account(500);
  const u = new URL(f.svc.base);
  const proxy = await dropProxy({ host: u.hostname, port: Number(u.port) });
  try {
    proxy.dropNext(1);
    const c = await sdk(key, `${proxy.base}/openai/v1`).chat.completions.create(
      { model: 'rendergate/shot-list', messages: [{ role: 'user', content: TEXT }] },
      { headers: { 'Idempotency-Key': crypto.randomUUID() } },
    );
    expect(proxy.dropped).toBe(1);
    expect(c.choices[0].message.content).toBe((await generation(c.id, key)).textOutput);
  } finally {
    await proxy.close();
  }
  const gens = await f.dbh.db.query('SELECT id FROM generations WHERE account_id = $1', [
    accountId,
  ]);
  const charges = await f.dbh.db.query(
    "SELECT count(*)::int AS n FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'",
    [accountId],
  );
  expect(gens.rowCount).toBe(1);
  expect(charges.rows[0].n).toBe(1);
});

it("a driver: openai model gets the conversation as it is, and its tokens reach the client before the backend's stream ends", async () => {
  let release = () => {};
  chat.hold = new Promise<void>((r) => {
    release = r;
  });
  const messages = [
    { role: 'system' as const, content: 'You write shot lists.' },
    { role: 'user' as const, content: 'A fox.' },
    { role: 'assistant' as const, content: 'Shot 1.' },
    { role: 'user' as const, content: 'More.' },
  ];
  const s = await sdk().chat.completions.create({ model: 'acme/qwen', messages, stream: true });
  const arrivals: { at: number; text: string }[] = [];
  let id = '';
  try {
    for await (const c of s) {
      id = c.id;
      const text = c.choices[0]?.delta.content;
      if (!text) continue;
      arrivals.push({ at: Date.now(), text });
      // Every piece but the last has arrived while the backend still holds its stream open.
      if (arrivals.map((a) => a.text).join('') === chat.pieces.slice(0, -1).join('')) release();
    }
  } finally {
    chat.hold = null;
    release();
  }
  const backend = chat.streams.at(-1)!;
  expect(backend.endedAt).toBeDefined();
  expect(arrivals.length).toBeGreaterThanOrEqual(chat.pieces.length - 1);
  expect(arrivals[0].at).toBeLessThan(backend.endedAt!);
  expect(arrivals.map((a) => a.text).join('')).toBe(chat.pieces.join(''));
  expect(chat.requests.at(-1)!.body.messages).toEqual(messages);
  const g = await generation(id);
  expect(g.textOutput).toBe(chat.pieces.join(''));
  // The whole conversation is what its text field holds: bounded and priced whole.
  expect(g.inputs).toEqual({ text: messages.map((m) => m.content).join('\n'), max_items: 5 });
});

it("usage is the chat server's own counts where it reports them, stored with the render", async () => {
  const messages = [{ role: 'user' as const, content: 'A fox on the ice.' }];
  // a server that reports none: counted here (o200k_base), whatever it was asked; rendered by
  // this process's worker, which said so, without asking the database for counts it knows are none
  chat.usage = undefined;
  const sent = vi.spyOn(pg.Pool.prototype, 'query');
  const countsRead = () =>
    sent.mock.calls.filter(([q]) => (q as { name?: string })?.name === 'reported-tokens').length;
  const counted = await sdk().chat.completions.create({ model: 'acme/qwen', messages });
  expect(countsRead()).toBe(0);
  sent.mockRestore();
  expect(chat.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
  expect(counted.usage!.prompt_tokens).toBeGreaterThan(0);
  expect(counted.usage!.prompt_tokens).not.toBe(1234);
  chat.usage = { prompt_tokens: 1234, completion_tokens: 56, total_tokens: 1290 };
  try {
    const headers = { 'Idempotency-Key': `usage-${crypto.randomUUID()}` };
    const c = await sdk().chat.completions.create({ model: 'acme/qwen', messages }, { headers });
    expect(c.usage).toMatchObject({
      prompt_tokens: 1234,
      completion_tokens: 56,
      total_tokens: 1290,
    });
    // Answered by the waiter (the worker's word muted): the counts came with the row it read, no
    // read of their own.
    const muted = vi.spyOn(LiveText.prototype, 'succeeded').mockImplementation(() => {});
    const read = vi.spyOn(pg.Pool.prototype, 'query');
    try {
      const w = await sdk().chat.completions.create({ model: 'acme/qwen', messages });
      expect(w.usage).toMatchObject({ prompt_tokens: 1234, completion_tokens: 56 });
      const named = (n: string) =>
        read.mock.calls.filter(([q]) => (q as { name?: string })?.name === n).length;
      expect(named('gen-get')).toBeGreaterThan(0);
      expect(named('reported-tokens')).toBe(0);
    } finally {
      muted.mockRestore();
      read.mockRestore();
    }
    // a replay answers from the stored render, its counts read back from the database
    const again = await sdk().chat.completions.create(
      { model: 'acme/qwen', messages },
      { headers },
    );
    expect(again.id).toBe(c.id);
    expect(again.usage).toMatchObject({ prompt_tokens: 1234, completion_tokens: 56 });
    const stream = await sdk().chat.completions.create({
      model: 'acme/qwen',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage).toMatchObject({ prompt_tokens: 1234, completion_tokens: 56 });
    const r = await sdk().responses.create({ model: 'acme/qwen', input: 'A fox on the ice.' });
    expect(r.usage).toMatchObject({ input_tokens: 1234, output_tokens: 56, total_tokens: 1290 });
    // a server that answers JSON reports them in its body
    chat.script.push({ kind: 'json' });
    const json = await sdk().chat.completions.create({ model: 'acme/qwen', messages });
    expect(json.usage).toMatchObject({ prompt_tokens: 1234, completion_tokens: 56 });
  } finally {
    chat.usage = undefined;
  }
});

it('answers a chat render before anything its outcome set off: no read of the row, no claim', async () => {
  const queries = vi.spyOn(pg.Pool.prototype, 'query');
  const ends = vi.spyOn(http.ServerResponse.prototype, 'end');
  try {
    await sdk().chat.completions.create({
      model: 'acme/qwen',
      messages: [{ role: 'user', content: 'A heron.' }],
    });
    // vitest numbers every call of every spy in one sequence: which came first.
    const named = (n: (name: string) => boolean) =>
      queries.mock.calls.flatMap(([q], i) =>
        n((q as { name?: string })?.name ?? '') ? [queries.mock.invocationCallOrder[i]] : [],
      );
    const [recorded] = named((n) => n === 'succeed-text');
    const answered = ends.mock.contexts.flatMap((res, i) =>
      (res as http.ServerResponse).req?.url === '/openai/v1/chat/completions'
        ? [ends.mock.invocationCallOrder[i]]
        : [],
    );
    expect(recorded).toBeDefined();
    expect(answered.length).toBe(1);
    // Its change notification (which beats the statement's own answer here) and the worker's word
    // woke no waiter to read the row again before the answer: rendered here, answered from here.
    expect(named((n) => n === 'gen-get').filter((at) => at > recorded && at < answered[0])).toEqual(
      [],
    );
    // Every claim the render's end set off (a pooled model claims again) went after the answer.
    await waitFor('a claim after the render', () =>
      named((n) => n.startsWith('claim-batch')).some((at) => at > recorded),
    );
    const claims = named((n) => n.startsWith('claim-batch')).filter((at) => at > recorded);
    expect(Math.min(...claims)).toBeGreaterThan(answered[0]);
  } finally {
    queries.mockRestore();
    ends.mockRestore();
  }
});
