// The OpenAI-compatible chat driver through the whole API, against a fake streaming chat server
// (test/fakes/openai.ts): the CEL messages and params, the key from the environment, retries of 429
// and a dropped stream, a model error, DELETE closing the stream, the key kept out of errors.
import { expect, it } from 'vitest';
import { chatFake, type ChatFake } from '../../fakes/openai.ts';
import {
  attempts,
  claimRoundPassed,
  create,
  finalOk,
  ledgerFor,
  remoteFixture,
  textModel,
} from './harness.ts';
import { waitFor } from '../../helpers/wait.ts';

let chat: ChatFake;
const f = remoteFixture({
  before: async () => {
    chat = await chatFake();
    process.env.RG_TEST_LLM_KEY = chat.apiKey;
  },
  models: () => [
    textModel('t/chat', {
      driver: 'openai',
      url: chat.base,
      model: 'qwen2.5-7b-instruct',
      apiKey: '${env:RG_TEST_LLM_KEY}',
      concurrencyPerUrl: 4,
      messages: [
        { role: 'system', content: "'You write shot lists.'" },
        { role: 'user', content: 'text' },
      ],
      params: { max_tokens: 'max_items * 80', temperature: '0.2' },
    }),
    textModel(
      't/chat-fast',
      {
        driver: 'openai',
        url: chat.base,
        model: 'm',
        apiKey: '${env:RG_TEST_LLM_KEY}',
        messages: [{ role: 'user', content: 'text' }],
      },
      { timeLimitSeconds: 2, maxAttempts: 1 },
    ),
  ],
  after: async () => {
    await chat.close();
    delete process.env.RG_TEST_LLM_KEY;
  },
});

it('answers with the streamed text; messages and params from CEL; the key sent as a bearer token', async () => {
  const g = await create(f, 't/chat', { text: 'A fox crosses a river.', max_items: 3 });
  const done = await finalOk(f, g.id);
  expect(done.textOutput).toBe(chat.pieces.join(''));
  const req = chat.requests.at(-1)!;
  expect(req.auth).toBe(`Bearer ${chat.apiKey}`);
  expect(req.body).toEqual({
    model: 'qwen2.5-7b-instruct',
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 240,
    temperature: 0.2,
    messages: [
      { role: 'system', content: 'You write shot lists.' },
      { role: 'user', content: 'A fox crosses a river.' },
    ],
  });
});

it('429 (with Retry-After) and a stream cut short are retried, charged once', async () => {
  chat.script.push({ kind: 'rate-limited' }, { kind: 'die' }, { kind: 'ok' });
  const n = chat.requests.length;
  const g = await create(f, 't/chat', { text: 'again' });
  const done = await finalOk(f, g.id);
  expect(done.textOutput).toBe(chat.pieces.join(''));
  expect(chat.requests.length - n).toBe(3);
  expect(await ledgerFor(f, g.id)).toEqual(['charge']);
});

it('an error event from the model fails at once, refunded', async () => {
  chat.script.push({ kind: 'error-event' });
  const g = await create(f, 't/chat', { text: 'too long' });
  const done = await f.api.waitFinal(f.key, g.id);
  expect([done.status, done.error.code, done.refundedCents]).toEqual([
    'failed',
    'MODEL_FAILED',
    g.costCents,
  ]);
  expect(await attempts(f, g.id)).toBe(1);
});

it('a refused key fails the render without the key in its error', async () => {
  chat.script.push({ kind: 'unauthorized' });
  const g = await create(f, 't/chat', { text: 'who am I' });
  const done = await f.api.waitFinal(f.key, g.id);
  expect([done.status, done.error.code]).toEqual(['failed', 'BACKEND_REJECTED']);
  expect(JSON.stringify(done)).not.toContain(chat.apiKey);
});

it('a malformed stream is retried', async () => {
  chat.script.push({ kind: 'malformed' }, { kind: 'ok' });
  const g = await create(f, 't/chat', { text: 'garbled' });
  expect((await finalOk(f, g.id)).textOutput).toBe(chat.pieces.join(''));
});

it('DELETE of a running render closes its stream on the server', async () => {
  chat.script.push({ kind: 'hang' });
  const aborted = chat.aborted;
  const n = chat.requests.length;
  const g = await create(f, 't/chat', { text: 'endless' });
  // The fake logs the request and starts watching for its close in one tick, and the worker has
  // registered the attempt (cancellable) before sending it: the DELETE can come at once.
  await waitFor('the request', () => chat.requests.length > n, { timeoutMs: 20_000 });
  expect((await f.api.call('DELETE', `/v1/generations/${g.id}`, { key: f.key })).status).toBe(200);
  await waitFor('the stream to be closed', () => chat.aborted > aborted, { timeoutMs: 10_000 });
});

it('a server that hangs mid-answer is stopped at the time limit, its stream closed, refunded', async () => {
  chat.script.push({ kind: 'hang' });
  const aborted = chat.aborted;
  const g = await create(f, 't/chat-fast', { text: 'slow' });
  const done = await f.api.waitFinal(f.key, g.id, 30_000);
  expect([done.status, done.error.code, done.refundedCents]).toEqual([
    'failed',
    'BACKEND_TIMEOUT',
    g.costCents,
  ]);
  await waitFor('the stream to be closed', () => chat.aborted > aborted, { timeoutMs: 10_000 });
});

it('while the server answers /models with 503 its renders wait, then run once it is back', async () => {
  chat.healthy = false;
  await waitFor(
    'the server seen down',
    async () =>
      (await (await fetch(`${f.svc.base}/readyz`)).json()).backends?.every((b: any) => !b.healthy),
    { timeoutMs: 10_000 },
  );
  const n = chat.requests.length;
  const g = await create(f, 't/chat', { text: 'later' });
  await claimRoundPassed(f.api, f.key);
  expect([await attempts(f, g.id), chat.requests.length]).toEqual([0, n]);
  chat.healthy = true;
  expect((await finalOk(f, g.id)).textOutput).toBe(chat.pieces.join(''));
});
