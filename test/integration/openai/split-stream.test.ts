// /openai/v1 streams in a split deployment: the request is answered by an api-only service and the render
// runs on a worker-only service (two instances of the real service on one database, as in
// test/integration/queue/fencing.test.ts), so a `driver: openai` model's tokens can reach the client
// only through the database's notifications (src/queue/live-text-relay.ts). The model server is the fake
// vLLM of test/fakes/openai.ts; the client is OpenAI's own SDK (the `openai` npm package).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { chatFake, type ChatFake } from '../../fakes/openai.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { waitFor } from '../../helpers/wait.ts';
import { textModel } from '../remote/harness.ts';

let chat: ChatFake;
let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let api: TestService;
let worker: TestService;
let key: string;
let dir: string;

beforeAll(async () => {
  chat = await chatFake();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-split-stream-'));
  fs.writeFileSync(
    path.join(dir, 'catalog.yaml'),
    stringify({
      models: [
        textModel('acme/qwen', {
          driver: 'openai',
          url: chat.base,
          model: 'qwen2.5-7b-instruct',
          apiKey: chat.apiKey,
          messages: [{ role: 'user', content: 'text' }],
        }),
      ],
    }),
  );
  dbh = await freshDatabase();
  const env = { RENDERGATE_CATALOG: path.join(dir, 'catalog.yaml') };
  api = await startTestService(dbh.url, { role: 'api', env });
  worker = await startTestService(dbh.url, { role: 'worker', env });
  key = (await client(api.base).account(100_000)).key;
}, 60_000);

afterAll(async () => {
  await api?.stop();
  await worker?.stop();
  await chat?.close();
  await dbh?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const sdk = () => new OpenAI({ apiKey: key, baseURL: `${api.base}/openai/v1`, maxRetries: 0 });

async function textOutput(id: string): Promise<string> {
  const g = await client(api.base).waitFinal(key, id);
  expect(g.status).toBe('succeeded');
  return g.textOutput as string;
}

/** A streamed chat completion, once its answer's headers came (its stream follows the render then). */
function open(idempotencyKey?: string) {
  return sdk().chat.completions.create(
    { model: 'acme/qwen', messages: [{ role: 'user', content: 'A fox.' }], stream: true },
    idempotencyKey ? { headers: { 'Idempotency-Key': idempotencyKey } } : {},
  );
}

/** Reads a stream to its end; `onText(content so far)` after each piece of content. */
async function read(s: Awaited<ReturnType<typeof open>>, onText: (soFar: string) => void) {
  const arrivals: { at: number; text: string }[] = [];
  let id = '';
  let finish: string | null = null;
  for await (const c of s) {
    id = c.id;
    finish = c.choices[0]?.finish_reason ?? finish;
    const text = c.choices[0]?.delta.content;
    if (!text) continue;
    arrivals.push({ at: Date.now(), text });
    onText(arrivals.map((a) => a.text).join(''));
  }
  return { id, finish, arrivals, content: arrivals.map((a) => a.text).join('') };
}

async function streamed(onText: (soFar: string) => void = () => {}, idempotencyKey?: string) {
  return read(await open(idempotencyKey), onText);
}

it("a worker process's render streams to the api process's client before the backend's stream ends", async () => {
  expect(api.running.worker).toBeNull(); // the api process renders nothing itself
  let release = () => {};
  chat.hold = new Promise<void>((r) => {
    release = r;
  });
  let soFar = '';
  const stream = streamed((text) => {
    soFar = text;
  });
  try {
    // Every piece but the last reaches the client while the backend still holds its stream open (in a
    // single piece at the end, it never would).
    await waitFor(
      'every piece but the last at the client',
      () => soFar === chat.pieces.slice(0, -1).join(''),
      { timeoutMs: 20_000 },
    );
  } finally {
    chat.hold = null;
    release();
  }
  const r = await stream;
  const backend = chat.streams.at(-1)!;
  expect(backend.endedAt).toBeDefined();
  expect(r.arrivals.length).toBeGreaterThanOrEqual(2);
  expect(r.arrivals[0].at).toBeLessThan(backend.endedAt!);
  expect(r.finish).toBe('stop');
  expect(r.content).toBe(chat.pieces.join(''));
  expect(r.content).toBe(await textOutput(r.id));
});

it('a render retried after it streamed part of its answer ends with exactly its textOutput', async () => {
  const before = chat.streams.length;
  // Attempt 1 streams two pieces and its connection dies (retryable); attempt 2 streams the whole.
  chat.script.push({ kind: 'die' }, { kind: 'ok' });
  const r = await streamed();
  expect(chat.streams.length - before).toBe(2);
  const attempt2 = chat.streams.at(-1)!;
  // Text of attempt 1 reached the client before attempt 2 began, and was not sent twice.
  expect(r.arrivals[0].at).toBeLessThan(attempt2.firstPieceAt);
  expect(r.finish).toBe('stop');
  expect(r.content).toBe(chat.pieces.join(''));
  expect(r.content).toBe(await textOutput(r.id));
  const { rows } = await dbh.db.query('SELECT attempts FROM generations WHERE id = $1', [r.id]);
  expect(rows[0].attempts).toBe(2);
});

it('a retry that writes a different text than the one streamed ends in an error, never in another answer', async () => {
  const pieces = chat.pieces;
  chat.script.push({ kind: 'die' }, { kind: 'ok' });
  let id = '';
  let got = '';
  const e = await streamed((soFar) => {
    got = soFar;
    // Attempt 1's text reached the client: the retry will write another.
    chat.pieces = ['A different ', 'answer.'];
  }).then(
    () => {
      throw new Error('expected an error');
    },
    (err: unknown) => err as InstanceType<typeof OpenAI.APIError>,
  );
  chat.pieces = pieces;
  expect(e).toBeInstanceOf(OpenAI.APIError);
  expect(e.code).toBe('STREAM_DIVERGED');
  id = /render (\S+) was retried/.exec(e.message)![1];
  const final = await textOutput(id);
  expect(final).toBe('A different answer.');
  expect(final.startsWith(got)).toBe(false);
  expect(pieces.join('').startsWith(got)).toBe(true);
});

it('pieces larger than a notification carries arrive whole, in order', async () => {
  const pieces = chat.pieces;
  // 12,000 and 16,000 bytes of UTF-8 (two- and four-byte characters), then a short piece.
  chat.pieces = ['é'.repeat(6000), '🦊'.repeat(4000), ' The end.'];
  try {
    const r = await streamed();
    expect(r.finish).toBe('stop');
    expect(r.content).toBe(chat.pieces.join(''));
    expect(r.content).toBe(await textOutput(r.id));
    // Live, not the stored text in one piece at the end: split pieces came as several chunks.
    expect(r.arrivals.length).toBeGreaterThanOrEqual(3);
  } finally {
    chat.pieces = pieces;
  }
});

it('a stream that joins a render under way (a replay) gets no misplaced piece: it ends with textOutput', async () => {
  let release = () => {};
  chat.hold = new Promise<void>((r) => {
    release = r;
  });
  const idem = crypto.randomUUID();
  let soFar = '';
  const first = streamed((text) => {
    soFar = text;
  }, idem);
  let late: ReturnType<typeof streamed> | undefined;
  try {
    await waitFor(
      'every piece but the last at the first client',
      () => soFar === chat.pieces.slice(0, -1).join(''),
      { timeoutMs: 20_000 },
    );
    // The replay listens only now: the pieces already published in the worker process are not sent
    // again, so the pieces it hears start past a gap.
    late = read(await open(idem), () => {});
  } finally {
    chat.hold = null;
    release();
  }
  const [a, b] = await Promise.all([first, late]);
  expect(b.id).toBe(a.id);
  const final = await textOutput(a.id);
  expect(a.content).toBe(final);
  expect(b.content).toBe(final);
  expect(b.finish).toBe('stop');
});
