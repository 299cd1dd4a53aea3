// Model servers that echo the secret they were given (docs/backends.md "Secrets"): the key never
// leaves in a successful answer, whatever the driver, through /v1 and /openai/v1, streamed or not,
// a key split across the stream's chunks at any place included; text without a secret is unchanged.
// The servers are fakes of their protocols (test/fakes/*.ts); the client is OpenAI's own SDK.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { chatFake, type ChatFake } from '../../fakes/openai.ts';
import { cogFake, type CogFake } from '../../fakes/cog.ts';
import { falFake, type FalFake } from '../../fakes/fal.ts';
import { replicateFake, type ReplicateFake } from '../../fakes/replicate.ts';
import { create, finalOk, remoteFixture, textModel } from '../remote/harness.ts';

const KEY = 'sk-echo-7Qx9LmZ2pW4rT8vK';
const MARK = '[secret]';

let chat: ChatFake;
let cog: CogFake;
let rep: ReplicateFake;
let fal: FalFake;
const f = remoteFixture({
  before: async () => {
    chat = await chatFake({ apiKey: KEY });
    cog = await cogFake();
    rep = await replicateFake();
    fal = await falFake();
    process.env.RG_ECHO_LLM_KEY = KEY;
    process.env.RG_ECHO_REPLICATE = rep.token;
    process.env.RG_ECHO_FAL = fal.key;
  },
  models: () => [
    textModel('t/echo', {
      driver: 'openai',
      url: chat.base,
      model: 'qwen2.5-7b-instruct',
      apiKey: '${env:RG_ECHO_LLM_KEY}',
      concurrencyPerUrl: 4,
      messages: [{ role: 'user', content: 'text' }],
    }),
    textModel('t/cog-echo', { driver: 'cog', url: cog.base }),
    textModel('t/rep-echo', {
      driver: 'replicate',
      model: 'owner/llm',
      apiToken: '${env:RG_ECHO_REPLICATE}',
      baseUrl: rep.base,
    }),
    textModel('t/fal-echo', {
      driver: 'fal',
      app: 'fal-ai/any-llm',
      apiKey: '${env:RG_ECHO_FAL}',
      baseUrl: fal.base,
    }),
  ],
  after: async () => {
    await Promise.all([chat, cog, rep, fal].map((x) => x?.close()));
    delete process.env.RG_ECHO_LLM_KEY;
    delete process.env.RG_ECHO_REPLICATE;
    delete process.env.RG_ECHO_FAL;
  },
});

/** Whether any 6 characters in a row of `secret` stand in `text` (half a key is still a leak). */
const leaks = (text: string, secret = KEY) =>
  Array.from({ length: secret.length - 5 }, (_, i) => secret.slice(i, i + 6)).some((p) =>
    text.includes(p),
  );

const sdk = () => new OpenAI({ apiKey: f.key, baseURL: `${f.svc.base}/openai/v1`, maxRetries: 0 });
const ask = { model: 't/echo', messages: [{ role: 'user' as const, content: 'Who are you?' }] };

/** A streamed answer: each chunk's content, and the answer's id. */
async function streamed(): Promise<{ id: string; chunks: string[] }> {
  const chunks: string[] = [];
  let id = '';
  for await (const c of await sdk().chat.completions.create({ ...ask, stream: true })) {
    id = c.id;
    const text = c.choices[0]?.delta.content;
    if (text) chunks.push(text);
  }
  return { id, chunks };
}

async function textOutputOf(id: string): Promise<string> {
  return (await finalOk(f, id)).textOutput as string;
}

describe('a chat server that echoes its key', () => {
  it('split in two chunks at every place: the stream and textOutput carry [secret]', async () => {
    const before = 'Here is what you asked for, with the key: ';
    for (let at = 0; at <= KEY.length; at++) {
      chat.pieces = [`${before}${KEY.slice(0, at)}`, `${KEY.slice(at)}, keep it.`];
      const { id, chunks } = await streamed();
      const content = chunks.join('');
      expect(content, `split at ${at}`).toBe(`${before}${MARK}, keep it.`);
      // The text before the key went on while the key was still coming.
      expect(chunks.length).toBeGreaterThan(1);
      for (const c of chunks) expect(leaks(c), `chunk ${JSON.stringify(c)}`).toBe(false);
      expect(await textOutputOf(id)).toBe(content);
    }
    // The key the server echoed is the one it was sent: the redaction is of a real secret.
    expect(chat.requests.at(-1)!.auth).toBe(`Bearer ${KEY}`);
  });

  it('in many small chunks, twice, among other text', async () => {
    chat.pieces = [...`a ${KEY} b ${KEY}${KEY} c`.match(/.{1,3}/g)!];
    const { id, chunks } = await streamed();
    expect(chunks.join('')).toBe(`a ${MARK} b ${MARK}${MARK} c`);
    expect(chunks.some((c) => leaks(c))).toBe(false);
    expect(await textOutputOf(id)).toBe(chunks.join(''));
  });

  it('answered whole: chat completion, /v1/generations, a server that ignores stream', async () => {
    chat.pieces = [`The key: ${KEY.slice(0, 9)}`, `${KEY.slice(9)} (${encodeURIComponent(KEY)})`];
    const done = await sdk().chat.completions.create(ask);
    expect(done.choices[0].message.content).toBe(`The key: ${MARK} (${MARK})`);
    expect(await textOutputOf(done.id)).toBe(done.choices[0].message.content);
    chat.script.push({ kind: 'json' });
    const whole = await sdk().chat.completions.create(ask);
    expect(whole.choices[0].message.content).toBe(`The key: ${MARK} (${MARK})`);
    chat.script.push({ kind: 'json' });
    const g = await create(f, 't/echo', { text: 'Who are you?' });
    const listed = (await finalOk(f, g.id)) as Record<string, unknown>;
    expect(leaks(JSON.stringify(listed))).toBe(false);
    expect(listed.textOutput).toBe(`The key: ${MARK} (${MARK})`);
  });

  it('text without a secret is passed on unchanged, piece for piece', async () => {
    const pieces = ['Shot 1: ', 'a wide ', 'view.\n', 'Shot 2: ', 'a close-up 🦊 [secret]?'];
    chat.pieces = pieces;
    const { id, chunks } = await streamed();
    expect(chunks.join('')).toBe(pieces.join(''));
    expect(await textOutputOf(id)).toBe(pieces.join(''));
    const done = await sdk().chat.completions.create(ask);
    expect(done.choices[0].message.content).toBe(pieces.join(''));
  });
});

describe('other drivers whose text model echoes a secret', () => {
  it('Cog, Replicate and fal answers come out with [secret] in its place', async () => {
    cog.textOutput = ['echo: ', KEY.slice(0, 5), KEY.slice(5), '.'];
    rep.textOutput = ['token ', rep.token, ' ok'];
    fal.textOutput = `key ${fal.key} ok`;
    const outputs = await Promise.all(
      ['t/cog-echo', 't/rep-echo', 't/fal-echo'].map(async (m) =>
        textOutputOf((await create(f, m, { text: 'hello' })).id),
      ),
    );
    expect(outputs).toEqual([`echo: ${MARK}.`, `token ${MARK} ok`, `key ${MARK} ok`]);
    const answer = await sdk().chat.completions.create({ ...ask, model: 't/cog-echo' });
    expect(answer.choices[0].message.content).toBe(`echo: ${MARK}.`);
  });
});
