// A fake OpenAI-compatible chat server, after the OpenAI API reference for `POST /v1/chat/completions`
// (streaming: server-sent events `data: {"choices":[{"index":0,"delta":{"content":"…"}}]}` ending with
// `data: [DONE]`) as vLLM (`vllm/entrypoints/openai/serving_chat.py`) and llama.cpp's server implement
// it, with `GET /v1/models` listing the served model and `Authorization: Bearer` checked. With
// `usage` set it reports its token counts as those servers do: `usage` on a JSON answer, and when the
// request asks with `stream_options: { include_usage: true }`, one last chunk with `choices: []` and
// `usage` before `[DONE]` (OpenAI's API reference, "stream_options"); unset, it is a server that
// reports none (an older one).
import type http from 'node:http';
import { listen, readBody, send, sleep } from './http-util.ts';

export type ChatBehaviour =
  | { kind: 'ok' }
  | { kind: 'rate-limited' }
  | { kind: 'server-error' }
  | { kind: 'die' }
  | { kind: 'hang' }
  | { kind: 'malformed' }
  | { kind: 'error-event' }
  | { kind: 'unauthorized' }
  /** A server that ignores `stream`: one `chat.completion` JSON body with the pieces joined. */
  | { kind: 'json' };

export interface ChatFake {
  base: string;
  apiKey: string;
  /** The answer's pieces, one SSE event each. */
  pieces: string[];
  pieceMs: number;
  script: ChatBehaviour[];
  requests: { body: any; auth: string | undefined }[];
  /** Requests whose client closed the stream before its end. */
  aborted: number;
  healthy: boolean;
  /** When set, the last piece waits for it: a test releases the stream's end when it chooses. */
  hold: Promise<void> | null;
  /** Date.now() when each stream sent its first piece and when it ended (`data: [DONE]` written). */
  streams: { firstPieceAt: number; endedAt?: number }[];
  /** The counts this server reports (OpenAI's `usage`), or none. */
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  close: () => Promise<void>;
}

export async function chatFake(opts: { apiKey?: string } = {}): Promise<ChatFake> {
  const fake = {
    apiKey: opts.apiKey ?? 'sk-test-secret-0123',
    pieces: ['Shot 1: ', 'a wide ', 'view.\n', 'Shot 2: ', 'a close-up.'],
    pieceMs: 5,
    script: [] as ChatBehaviour[],
    requests: [] as ChatFake['requests'],
    aborted: 0,
    healthy: true,
    hold: null,
    streams: [] as ChatFake['streams'],
  } as ChatFake;
  const chunk = (content: string) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

  async function chat(req: http.IncomingMessage, res: http.ServerResponse) {
    const body = await readBody(req);
    fake.requests.push({ body, auth: req.headers.authorization });
    const b = fake.script.shift() ?? { kind: 'ok' };
    if (b.kind === 'unauthorized' || req.headers.authorization !== `Bearer ${fake.apiKey}`)
      return send(res, 401, {
        error: { message: 'Invalid API key', type: 'invalid_request_error' },
      });
    if (b.kind === 'rate-limited')
      return send(res, 429, { error: { message: 'Too many requests' } }, { 'retry-after': '1' });
    if (b.kind === 'server-error') return send(res, 500, { error: { message: 'engine dead' } });
    if (b.kind === 'json')
      return send(res, 200, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: fake.pieces.join('') },
            finish_reason: 'stop',
          },
        ],
        ...(fake.usage ? { usage: fake.usage } : {}),
      });
    let closed = false;
    res.on('close', () => {
      if (!res.writableFinished) {
        closed = true;
        fake.aborted++;
      }
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (b.kind === 'malformed') return res.end('data: {"choices": [\n\n');
    if (b.kind === 'error-event')
      return res.end(
        `data: ${JSON.stringify({ error: { message: 'prompt too long', code: 400 } })}\n\n`,
      );
    const timing: ChatFake['streams'][number] = { firstPieceAt: Date.now() };
    fake.streams.push(timing);
    for (const [i, piece] of fake.pieces.entries()) {
      if (closed) return;
      if (i === fake.pieces.length - 1 && fake.hold) await fake.hold;
      res.write(chunk(piece));
      if (b.kind === 'die' && i === 1) return void req.socket.destroy();
      await sleep(fake.pieceMs);
    }
    if (b.kind === 'hang') {
      while (!closed) await sleep(20);
      return;
    }
    res.write(
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
    );
    if (fake.usage && body?.stream_options?.include_usage === true)
      res.write(`data: ${JSON.stringify({ choices: [], usage: fake.usage })}\n\n`);
    res.end('data: [DONE]\n\n');
    timing.endedAt = Date.now();
  }

  const { base, close } = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && url.pathname === '/v1/chat/completions')
      return void chat(req, res).catch(() => res.destroy());
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      if (!fake.healthy) return send(res, 503, { error: { message: 'loading' } });
      return send(res, 200, {
        object: 'list',
        data: [{ id: 'qwen2.5-7b-instruct', object: 'model', owned_by: 'vllm' }],
      });
    }
    send(res, 404, { error: { message: 'not found' } });
  });
  fake.base = `${base}/v1`;
  fake.close = close;
  return fake;
}
