// Hostile input at the fourth tranche's protocol fronts: `/openai/v1/chat/completions` and
// `/openai/v1/responses` (any JSON body, and calls a client would make with the usual parameters),
// `/mcp` (any JSON-RPC message, and any arguments to each of the six tools), and a render's live
// events (any id, any `Last-Event-ID`). Whatever is sent: never a 5xx; an error in the front's own
// shape (OpenAI's body with a code of the closed list and its status, or for a render that failed
// 400 with its failure code and `x-should-retry: false`; a JSON-RPC error; a tool error with a code
// of the closed list) carrying no internals; and never a tool error that says the server failed
// (INTERNAL_ERROR), which would be a bug the client found. Valid calls render for real (a worker
// runs the built-in text model), so a success is checked as the right object, and at the end the
// money holds: every invariant, and the account paid exactly what its renders cost.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../../src/domain/errors.ts';
import { RENDER_FAILURES } from '../../../src/domain/render-failures.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { waitFor } from '../../helpers/wait.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { check, CODES, expectNoLeaks, record, send, type Answer } from './harness.ts';

const TEXT_MODEL = 'rendergate/shot-list';
let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let key: string;
let accountId: string;
const START_CENTS = 10_000_000;

beforeAll(async () => {
  dbh = await freshDatabase();
  svc = await startTestService(dbh.url, { env: { RENDERGATE_WORKER_CONCURRENCY: '4' } });
  const a = await client(svc.base).account(START_CENTS, { rateLimitPerMinute: 1_000_000 });
  key = a.key;
  accountId = a.accountId;
});
afterAll(async () => {
  await svc?.stop();
  await dbh?.drop();
});

function noLeaks(a: Answer, sent: string, what: string): void {
  expectNoLeaks(a.text, sent, `${what} -> ${a.text.slice(0, 600)}`);
}

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  send(svc.base, {
    method: 'POST',
    path,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body,
  });

// --- the OpenAI fronts ---------------------------------------------------------------------------

/** A value of any JSON type, small. */
const anyJson = fc.jsonValue({ maxDepth: 3 });
const message = fc.oneof(
  fc.record(
    {
      role: fc.oneof(fc.constantFrom('user', 'system', 'assistant', 'developer', 'tool'), anyJson),
      content: fc.oneof(
        fc.string({ maxLength: 80 }),
        fc.array(
          fc.record(
            {
              type: fc.oneof(fc.constantFrom('text', 'input_text', 'image_url'), anyJson),
              text: anyJson,
            },
            { requiredKeys: [] },
          ),
          { maxLength: 3 },
        ),
        anyJson,
      ),
    },
    { requiredKeys: [] },
  ),
  anyJson,
);
/** The parameters OpenAI's clients send, each with a right, a wrong or an odd value. */
const params = {
  model: fc.oneof(
    fc.constant(TEXT_MODEL),
    fc.constantFrom('rendergate/image-to-video', 'nope/nope', '', 'gpt-4o'),
    anyJson,
  ),
  stream: fc.oneof(fc.boolean(), anyJson),
  max_tokens: fc.oneof(fc.integer({ min: -5, max: 5000 }), anyJson),
  temperature: fc.oneof(fc.double({ noNaN: true }), anyJson),
  response_format: fc.oneof(
    fc.constantFrom({ type: 'text' }, { type: 'json_object' }),
    fc.record({ type: fc.constant('json_schema'), json_schema: anyJson }),
    anyJson,
  ),
  logprobs: fc.oneof(fc.boolean(), anyJson),
  n: fc.oneof(fc.integer({ min: -1, max: 3 }), anyJson),
  tools: anyJson,
  modalities: fc.oneof(fc.constantFrom(['text'], ['text', 'audio']), anyJson),
  stream_options: fc.oneof(fc.record({ include_usage: fc.boolean() }), anyJson),
  user: anyJson,
};
/** Parameters as a well-behaved client sends them: what a valid call may carry. */
const fairParams = {
  stream: fc.boolean(),
  max_tokens: fc.integer({ min: 1, max: 500 }),
  temperature: fc.double({ min: 0, max: 2, noNaN: true }),
  response_format: fc.constant({ type: 'text' }),
  n: fc.constant(1),
  user: fc.string({ maxLength: 20 }),
};
const userText = fc.string({ minLength: 1, maxLength: 80 });
const chatBody = fc.oneof(
  // a call a client would make: the model, a user's message and some of the usual parameters
  fc.record(
    {
      ...fairParams,
      model: fc.constant(TEXT_MODEL),
      messages: fc.tuple(userText).map(([content]) => [{ role: 'user', content }]),
    },
    { requiredKeys: ['model', 'messages'] },
  ),
  fc.record(
    { ...params, messages: fc.oneof(fc.array(message, { maxLength: 4 }), anyJson) },
    { requiredKeys: [] },
  ),
  anyJson,
);
const responsesBody = fc.oneof(
  fc.record(
    {
      ...fairParams,
      model: fc.constant(TEXT_MODEL),
      input: fc.oneof(
        userText,
        userText.map((content) => [{ role: 'user', content }]),
      ),
      instructions: fc.string({ maxLength: 40 }),
    },
    { requiredKeys: ['model', 'input'] },
  ),
  fc.record(
    {
      ...params,
      input: fc.oneof(fc.string({ maxLength: 80 }), fc.array(message, { maxLength: 4 }), anyJson),
      instructions: fc.oneof(fc.string({ maxLength: 40 }), anyJson),
      max_output_tokens: fc.oneof(fc.integer({ min: -5, max: 5000 }), anyJson),
    },
    { requiredKeys: [] },
  ),
  anyJson,
);

/** Asserts an answer of an OpenAI front: a success of `object`, or OpenAI's error body. */
function expectOpenAi(a: Answer, sent: string, object: 'chat.completion' | 'response'): void {
  record(a.status);
  const what = `${object} ${sent.slice(0, 300)} -> ${a.status} ${a.text.slice(0, 600)}`;
  expect(a.status, what).toBeLessThan(500);
  expect([200, 400, 402, 404, 409, 413, 415, 429], what).toContain(a.status);
  noLeaks(a, sent, what);
  if (a.status === 200) {
    if ((a.headers['content-type'] ?? '').startsWith('text/event-stream')) {
      // a stream: events of JSON, ending as the front's protocol ends it
      const data = a.text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6));
      expect(data.length, what).toBeGreaterThan(0);
      if (object === 'chat.completion') expect(data.at(-1), what).toBe('[DONE]');
      for (const d of object === 'chat.completion' ? data.slice(0, -1) : data) JSON.parse(d);
      if (object === 'response') {
        // OpenAI's two ends of a response's stream: completed, or failed (a render refunded)
        const last = JSON.parse(data.at(-1)!);
        expect(['response.completed', 'response.failed'], what).toContain(last.type);
        if (last.type === 'response.failed')
          expect(last.response.error.code in RENDER_FAILURES, what).toBe(true);
      }
      return;
    }
    const body = JSON.parse(a.text);
    expect(body.object, what).toBe(object);
    expect(typeof body.usage, what).toBe('object');
    expect(body.usage.rendergate?.generationId, what).toBe(body.id);
    return;
  }
  expect(a.headers['content-type'] ?? '', what).toMatch(/^application\/json/);
  const body = JSON.parse(a.text);
  expect(Object.keys(body), what).toEqual(['error']);
  expect(typeof body.error.message === 'string' && body.error.message.length > 0, what).toBe(true);
  expect(typeof body.error.type, what).toBe('string');
  if (body.error.type === 'server_error') {
    // a render that failed (refunded): 400 so that no client retries it, with its failure code
    expect(a.status, what).toBe(400);
    expect(body.error.code in RENDER_FAILURES, `not a render failure code: ${what}`).toBe(true);
    expect(a.headers['x-should-retry'], what).toBe('false');
    expect(body.error.message, what).toContain('its charge was returned');
  } else {
    expect(CODES.has(body.error.code), `code not in the closed list: ${what}`).toBe(true);
    expect(ERROR_STATUS[body.error.code as keyof typeof ERROR_STATUS], what).toBe(a.status);
  }
  expect(body.error.param === null || typeof body.error.param === 'string', what).toBe(true);
}

describe('the OpenAI fronts', () => {
  it('any JSON at /openai/v1/chat/completions is a completion or an OpenAI error, never a 5xx', async () => {
    await check('chat completions', chatBody, async (b) => {
      const sent = JSON.stringify(b);
      expectOpenAi(await post('/openai/v1/chat/completions', sent), sent, 'chat.completion');
    });
  });

  it('any JSON at /openai/v1/responses is a response or an OpenAI error, never a 5xx', async () => {
    await check('responses', responsesBody, async (b) => {
      const sent = JSON.stringify(b);
      expectOpenAi(await post('/openai/v1/responses', sent), sent, 'response');
    });
  });
});

// --- MCP -------------------------------------------------------------------------------------------

const TOOLS = [
  'list_models',
  'get_model',
  'quote',
  'create_generation',
  'get_generation',
  'wait_generation',
] as const;
const toolArgs = fc.oneof(
  fc.record(
    {
      modelId: fc.oneof(fc.constant(TEXT_MODEL), fc.constant('rendergate/image-to-video'), anyJson),
      id: fc.oneof(fc.constant('gen_00000000000000000000000000000000'), anyJson),
      inputs: fc.oneof(
        fc.record({ text: fc.oneof(fc.string({ maxLength: 60 }), anyJson) }, { requiredKeys: [] }),
        anyJson,
      ),
      idempotencyKey: fc.oneof(fc.string({ maxLength: 40 }), anyJson),
      seconds: fc.oneof(fc.integer({ min: -1, max: 2 }), anyJson),
    },
    { requiredKeys: [] },
  ),
  anyJson,
);
const rpc = fc.oneof(
  fc.record({
    jsonrpc: fc.constant('2.0'),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 })),
    method: fc.constant('tools/call'),
    params: fc.record(
      { name: fc.oneof(fc.constantFrom(...TOOLS), anyJson), arguments: toolArgs },
      {
        requiredKeys: [],
      },
    ),
  }),
  fc.record(
    {
      jsonrpc: fc.oneof(fc.constant('2.0'), anyJson),
      id: anyJson,
      method: fc.oneof(
        fc.constantFrom(
          'tools/list',
          'initialize',
          'ping',
          'resources/list',
          'notifications/initialized',
        ),
        anyJson,
      ),
      params: anyJson,
    },
    { requiredKeys: [] },
  ),
  fc.array(anyJson, { maxLength: 3 }),
  anyJson,
);

/** The JSON-RPC messages of an answer: a JSON body (a message or a batch). */
function messagesOf(a: Answer, what: string): any[] {
  const body = JSON.parse(a.text);
  const list = Array.isArray(body) ? body : [body];
  for (const m of list) {
    expect(m.jsonrpc, what).toBe('2.0');
    expect('result' in m || 'error' in m, what).toBe(true);
  }
  return list;
}

describe('MCP', () => {
  it('any JSON-RPC message at /mcp is answered inside the protocol; a tool never fails inside', async () => {
    await check(
      'mcp',
      rpc,
      async (m) => {
        const sent = JSON.stringify(m);
        const a = await post('/mcp', sent, { accept: 'application/json, text/event-stream' });
        record(a.status);
        const what = `${sent.slice(0, 300)} -> ${a.status} ${a.text.slice(0, 600)}`;
        expect(a.status, what).toBeLessThan(500);
        expect([200, 202, 400, 406, 413, 415, 429], what).toContain(a.status);
        noLeaks(a, sent, what);
        if (a.status === 202) {
          expect(a.text, what).toBe(''); // notifications and responses only: nothing to answer
          return;
        }
        for (const r of messagesOf(a, what)) {
          if ('error' in r) {
            expect(Number.isInteger(r.error.code), what).toBe(true);
            expect(typeof r.error.message, what).toBe('string');
            continue;
          }
          const res = r.result;
          if (res?.isError) {
            const err = JSON.parse(res.content[0].text);
            expect(CODES.has(err.code), `tool error code: ${what}`).toBe(true);
            expect(err.code, `the tool failed inside: ${what}`).not.toBe('INTERNAL_ERROR');
          }
        }
      },
      300,
    );
  });
});

// --- live events -----------------------------------------------------------------------------------

describe('live events', () => {
  it('any Last-Event-ID on a render of the account, and any id, opens the stream or is refused', async () => {
    const created = await post(
      '/v1/generations',
      JSON.stringify({ modelId: TEXT_MODEL, inputs: { text: 'a fox' } }),
      { 'idempotency-key': 'hostile-events' },
    );
    expect(created.status).toBe(202);
    const genId = JSON.parse(created.text).id as string;
    await check(
      'events',
      fc.record({
        id: fc.oneof(fc.constant(genId), fc.string({ maxLength: 60 })),
        last: fc.oneof(
          fc.string({ maxLength: 80 }),
          fc.stringMatching(/^[0-9]{1,25}(-[0-9]{1,25})?$/),
          fc.constant(''),
        ),
      }),
      async ({ id, last }) => {
        const path = `/v1/generations/${encodeURIComponent(id)}/events`;
        // A header value fetch refuses (a control character) is not something a client can send.
        const headers: Record<string, string> = { authorization: `Bearer ${key}` };
        if (![...last].some((c) => c < ' ' || c === '\x7f') && last === last.trim())
          headers['last-event-id'] = last;
        const ctl = new AbortController();
        const res = await fetch(svc.base + path, { headers, signal: ctl.signal });
        record(res.status);
        const what = `${path} last-event-id ${JSON.stringify(last)} -> ${res.status}`;
        expect([200, 400, 404, 429], what).toContain(res.status);
        if (res.status === 200) {
          expect(res.headers.get('content-type') ?? '', what).toMatch(/^text\/event-stream/);
          ctl.abort(); // the render is final soon; the first bytes are enough here
          await res.body?.cancel().catch(() => undefined);
        } else {
          const body = JSON.parse(await res.text());
          expect(ERROR_STATUS[body.code as keyof typeof ERROR_STATUS], what).toBe(res.status);
        }
      },
      100,
    );
  });
});

describe('the money after all of it', () => {
  it('holds every invariant, and the account paid exactly what its renders cost', async () => {
    // every render final first: a render still queued or running has been charged, not yet settled
    await waitFor('every render of the account final', async () => {
      const { rows } = await dbh.db.query(
        `SELECT count(*)::int AS n FROM generations WHERE account_id = $1 AND status = 'queued'`,
        [accountId],
      );
      return (rows[0] as { n: number }).n === 0;
    });
    await checkInvariants(dbh.db);
    const { rows } = await dbh.db.query(
      `SELECT a.balance_cents::bigint AS balance,
              (SELECT coalesce(sum(cost_cents - refunded_cents), 0) FROM generations g
                WHERE g.account_id = a.id AND g.mode = 'live')::bigint AS spent
         FROM accounts a WHERE a.id = $1`,
      [accountId],
    );
    const r = rows[0] as { balance: string; spent: string };
    expect(Number(r.spent)).toBeGreaterThan(0); // valid calls were made, and charged
    expect(Number(r.balance)).toBe(START_CENTS - Number(r.spent));
  });
});
