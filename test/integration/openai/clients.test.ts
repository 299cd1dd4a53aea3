// /openai/v1 through the three client libraries tools are built on, at their default settings: the
// `openai` package (chat completions and responses), the AI SDK's default `openai(model)` (the
// Responses API) and LangChain's ChatOpenAI (chat completions, and `useResponsesApi`). Each gets its
// text and `usage`; a render that fails makes exactly one render per call for each of them (none
// retries it); unsupported parameters are refused; a `driver: openai` model (a fake vLLM,
// test/fakes/openai.ts) gets the catalog's system prompt first, its `response_format`, and the
// whole conversation bounded and priced.
import crypto from 'node:crypto';
import OpenAI from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { expect, it } from 'vitest';
import { chatFake, type ChatFake } from '../../fakes/openai.ts';
import { remoteFixture, textModel } from '../remote/harness.ts';

let chat: ChatFake;
const f = remoteFixture({
  before: async () => {
    chat = await chatFake();
    process.env.RG_TEST_VLLM_KEY = chat.apiKey;
  },
  models: () => [
    textModel(
      'acme/qwen',
      {
        driver: 'openai',
        url: chat.base,
        model: 'qwen2.5-7b-instruct',
        apiKey: '${env:RG_TEST_VLLM_KEY}',
        messages: [
          { role: 'system', content: '"Answer as a film director."' },
          { role: 'user', content: 'text' },
        ],
      },
      { price: '1 + size(text) / 100' },
    ),
  ],
  after: async () => {
    await chat.close();
    delete process.env.RG_TEST_VLLM_KEY;
  },
});

const ANSWER = 'Shot 1: a wide view.\nShot 2: a close-up.';
/** The answer's tokens in o200k_base: the fake reports no counts of its own. */
const OUT = countTokens(ANSWER);
const base = () => `${f.svc.base}/openai/v1`;

/** The account's generations, oldest first. */
async function generations(accountId: string) {
  const { rows } = await f.dbh.db.query(
    'SELECT id, status, cost_cents FROM generations WHERE account_id = $1 ORDER BY id',
    [accountId],
  );
  return rows;
}

it('openai: responses.create, plain and streamed, with usage', async () => {
  const { key } = await f.api.account(500);
  const sdk = new OpenAI({ apiKey: key, baseURL: base() });
  const r = await sdk.responses.create({
    model: 'acme/qwen',
    instructions: 'Be brief.',
    input: 'A fox crosses a frozen river.',
  });
  expect(r.status).toBe('completed');
  expect(r.output_text).toBe(ANSWER);
  expect(r.id).toMatch(/^gen_/);
  expect(r.usage!.output_tokens).toBe(OUT);
  expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
  expect((r.usage as any).rendergate).toEqual({
    generationId: r.id,
    costCents: expect.any(Number),
  });
  // The catalog's system message first, then the client's instructions and input.
  expect(chat.requests.at(-1)!.body.messages).toEqual([
    { role: 'system', content: 'Answer as a film director.' },
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'A fox crosses a frozen river.' },
  ]);
  const events: string[] = [];
  let text = '';
  for await (const e of await sdk.responses.create({
    model: 'acme/qwen',
    input: [{ role: 'user', content: 'A fox.' }],
    stream: true,
  })) {
    events.push(e.type);
    if (e.type === 'response.output_text.delta') text += e.delta;
    if (e.type === 'response.completed') expect(e.response.usage!.output_tokens).toBeGreaterThan(5);
  }
  expect(text).toBe(ANSWER);
  expect(events[0]).toBe('response.created');
  expect(events).toContain('response.output_text.done');
  expect(events.at(-1)).toBe('response.completed');
});

it('openai: chat completions carry usage, and a last chunk with it when asked', async () => {
  const { key } = await f.api.account(500);
  const sdk = new OpenAI({ apiKey: key, baseURL: base() });
  const c = await sdk.chat.completions.create({
    model: 'acme/qwen',
    messages: [{ role: 'user', content: 'A fox.' }],
  });
  expect(c.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: OUT });
  const chunks = [];
  for await (const ch of await sdk.chat.completions.create({
    model: 'acme/qwen',
    messages: [{ role: 'user', content: 'A fox.' }],
    stream: true,
    stream_options: { include_usage: true },
  }))
    chunks.push(ch);
  expect(chunks.at(-1)!.choices).toEqual([]);
  expect(chunks.at(-1)!.usage!.completion_tokens).toBe(OUT);
});

it("the AI SDK's default openai(model) (Responses API): text and usage, plain and streamed", async () => {
  const { key } = await f.api.account(500);
  const openai = createOpenAI({ apiKey: key, baseURL: base() });
  const r = await generateText({ model: openai('acme/qwen'), prompt: 'A fox.' });
  expect(r.text).toBe(ANSWER);
  expect(r.usage.outputTokens).toBe(OUT);
  expect(r.usage.inputTokens).toBeGreaterThan(0);
  const s = streamText({ model: openai('acme/qwen'), prompt: 'A fox.' });
  let text = '';
  for await (const piece of s.textStream) text += piece;
  expect(text).toBe(ANSWER);
  expect((await s.usage).outputTokens).toBe(OUT);
});

it("LangChain's ChatOpenAI, chat completions and useResponsesApi: text and usage_metadata", async () => {
  const { key } = await f.api.account(500);
  for (const useResponsesApi of [false, true]) {
    const llm = new ChatOpenAI({
      model: 'acme/qwen',
      apiKey: key,
      configuration: { baseURL: base() },
      useResponsesApi,
    });
    const m = await llm.invoke('A fox.');
    expect(m.text).toBe(ANSWER);
    expect(m.usage_metadata).toMatchObject({ output_tokens: OUT });
  }
});

it('a failed render makes one render per call for each client at its default retries', async () => {
  const { key, accountId } = await f.api.account(500);
  const calls: [string, () => Promise<unknown>][] = [
    [
      'openai chat',
      () =>
        new OpenAI({ apiKey: key, baseURL: base() }).chat.completions.create({
          model: 'acme/qwen',
          messages: [{ role: 'user', content: 'A fox.' }],
        }),
    ],
    [
      'openai responses',
      () =>
        new OpenAI({ apiKey: key, baseURL: base() }).responses.create({
          model: 'acme/qwen',
          input: 'A fox.',
        }),
    ],
    [
      'AI SDK',
      () =>
        generateText({
          model: createOpenAI({ apiKey: key, baseURL: base() })('acme/qwen'),
          prompt: 'A fox.',
        }),
    ],
    [
      'LangChain',
      () =>
        new ChatOpenAI({
          model: 'acme/qwen',
          apiKey: key,
          configuration: { baseURL: base() },
        }).invoke('A fox.'),
    ],
    [
      'LangChain responses',
      () =>
        new ChatOpenAI({
          model: 'acme/qwen',
          apiKey: key,
          configuration: { baseURL: base() },
          useResponsesApi: true,
        }).invoke('A fox.'),
    ],
  ];
  for (const [name, call] of calls) {
    const before = chat.requests.length;
    const made = (await generations(accountId)).length;
    // The fake fails the next render for good; any retry would be a second render, which succeeds.
    chat.script.push({ kind: 'error-event' }, { kind: 'ok' }, { kind: 'ok' });
    const err = await call().then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err, name).not.toBeNull();
    expect(String(err), name).toMatch(/MODEL_FAILED/);
    expect([name, chat.requests.length - before]).toEqual([name, 1]);
    expect([name, (await generations(accountId)).length - made]).toEqual([name, 1]);
    chat.script.length = 0;
  }
  expect((await f.api.call('GET', '/v1/me', { key })).json.balanceCents).toBe(500);
});

it('parameters a model cannot honour are refused naming them; JSON formats reach a chat server', async () => {
  const { key } = await f.api.account(500);
  const post = (path: string, body: object) =>
    fetch(`${base()}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, json: await r.json() }));
  const messages = [{ role: 'user', content: 'A fox.' }];
  const refused: [string, object, string][] = [
    ['/chat/completions', { logprobs: true }, 'logprobs'],
    ['/chat/completions', { n: 2 }, 'n'],
    ['/chat/completions', { modalities: ['text', 'audio'] }, 'modalities'],
    ['/chat/completions', { tools: [{ type: 'function', function: { name: 'f' } }] }, 'tools'],
    ['/chat/completions', { response_format: { type: 'xml' } }, 'response_format'],
    ['/responses', { tools: [{ type: 'web_search' }] }, 'tools'],
    ['/responses', { previous_response_id: 'resp_1' }, 'previous_response_id'],
    ['/responses', { include: ['message.output_text.logprobs'] }, 'include'],
  ];
  for (const [path, extra, param] of refused) {
    const body = path === '/responses' ? { input: 'A fox.' } : { messages };
    const r = await post(path, { model: 'acme/qwen', ...body, ...extra });
    expect([path, param, r.status, r.json.error.param]).toEqual([path, param, 400, param]);
  }
  const schema = {
    type: 'json_schema',
    json_schema: { name: 'shots', schema: { type: 'object' }, strict: true },
  };
  const ok = await post('/chat/completions', {
    model: 'acme/qwen',
    messages,
    response_format: schema,
  });
  expect(ok.status).toBe(200);
  expect(chat.requests.at(-1)!.body.response_format).toEqual(schema);
  const viaResponses = await post('/responses', {
    model: 'acme/qwen',
    input: 'A fox.',
    text: { format: { type: 'json_schema', name: 'shots', schema: { type: 'object' } } },
  });
  expect(viaResponses.status).toBe(200);
  expect(chat.requests.at(-1)!.body.response_format).toEqual({
    type: 'json_schema',
    json_schema: { name: 'shots', schema: { type: 'object' } },
  });
});

it("a chat server's whole conversation is bounded by its text field and priced whole", async () => {
  const { key, accountId } = await f.api.account(500);
  const sdk = new OpenAI({ apiKey: key, baseURL: base(), maxRetries: 0 });
  const long = 'x'.repeat(900);
  // Three messages of 900 characters: 2,702 in all, over the field's 2,000, though the last is short.
  const e = await sdk.chat.completions
    .create({
      model: 'acme/qwen',
      messages: [
        { role: 'user', content: long },
        { role: 'assistant', content: long },
        { role: 'user', content: long },
        { role: 'user', content: 'hi' },
      ],
    })
    .catch((err: unknown) => err as InstanceType<typeof OpenAI.APIError>);
  expect(e).toBeInstanceOf(OpenAI.BadRequestError);
  expect([(e as any).code, (e as any).param]).toEqual(['INVALID_INPUT', 'messages']);
  expect(await generations(accountId)).toEqual([]);
  // Within the bound: the price is the whole text's, not the last message's.
  const c = await sdk.chat.completions.create(
    {
      model: 'acme/qwen',
      messages: [
        { role: 'user', content: long },
        { role: 'user', content: 'hi' },
      ],
    },
    { headers: { 'Idempotency-Key': crypto.randomUUID() } },
  );
  expect((c.usage as any).rendergate.costCents).toBe(1 + Math.floor(903 / 100));
  expect((await generations(accountId))[0].cost_cents).toBe(10);
});
