// An OpenAI-compatible chat server (vLLM, llama.cpp's server, Ollama under /v1) for text models:
// `POST {url}/chat/completions` with `stream: true`, read as server-sent events (`data: {choices:
// [{delta: {content}}]}` … `data: [DONE]`). Streaming is what lets a render report progress (tokens
// so far against `max_tokens`) and stop the server's work when it is cancelled: closing the stream
// aborts the request in vLLM and llama.cpp. `messages[].content` and `params` are CEL over the inputs.
// `stream_options.include_usage` asks for the server's own token counts, in one last chunk with
// `choices: []` and `usage` before `[DONE]` (OpenAI's chat API reference; vLLM, llama.cpp and Ollama
// send it too; a server that does not know the option leaves it out): /openai/v1's answers give
// them where the server sent them (`usage` of a JSON answer too).
import { createParser } from 'eventsource-parser';
import type { CompiledModel } from '../../domain/catalog-load.ts';
import type { ResolvedInputs } from '../../domain/catalog.ts';
import {
  RenderError,
  type RenderContext,
  type RenderOutput,
  type ReportedTokens,
} from '../types.ts';
import {
  call,
  errorFor,
  malformed,
  networkError,
  readJson,
  textAnswerLimit,
  textOutput,
  withRetries,
  type CallOptions,
} from '../shared/http.ts';
import {
  metered,
  serverOf,
  textOf,
  timeLeft,
  type DriverDeps,
  type RemoteBackend,
} from '../shared/driver.ts';
import type { OpenAiBinding } from './catalog.ts';

/** OpenAI's `usage` as counts, when it is one: two whole numbers a PostgreSQL integer holds. */
export function usageOf(usage: unknown): ReportedTokens | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const { prompt_tokens: input, completion_tokens: output } = usage as Record<string, unknown>;
  const count = (n: unknown): n is number =>
    typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= 2_147_483_647;
  return count(input) && count(output) ? { input, output } : undefined;
}

export function createOpenAiBackend(
  model: CompiledModel,
  b: OpenAiBinding,
  deps: DriverDeps,
): RemoteBackend {
  const apiKey = deps.secrets.resolve(b.apiKey);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  };
  const redact = (t: string) => deps.secrets.redact(t);
  const cel = model.backendCel;

  // A chat request's own conversation (/openai/v1) goes as it is, after the catalog's system
  // messages (the operator's instructions stay in front of the client's); otherwise the catalog's
  // messages. A chat request's output format (`response_format`: JSON mode, a JSON schema) goes too.
  function body(inputs: ResolvedInputs, ctx: RenderContext): Record<string, unknown> {
    const params = cel.params?.evaluate(inputs) ?? {};
    const contents = cel.messages!.evaluate(inputs);
    const catalog = b.messages.map((m, i) => ({
      role: m.role,
      content: textOf(contents[String(i)] ?? ''),
    }));
    const chat = ctx.messages;
    const messages = chat ? [...catalog.filter((m) => m.role === 'system'), ...chat] : catalog;
    const format = ctx.responseFormat ? { response_format: ctx.responseFormat } : {};
    return {
      ...params,
      ...format,
      model: b.model,
      messages,
      stream: true,
      stream_options: { include_usage: true },
    };
  }

  async function readStream(
    res: Response,
    ctx: RenderContext,
    o: CallOptions,
    maxTokens: number | null,
    until: number,
  ): Promise<RenderOutput> {
    let text = '';
    let tokens: ReportedTokens | undefined;
    let done = false;
    let failure: RenderError | null = null;
    let pieces = 0;
    let bytes = 0;
    const tooLarge = () =>
      new RenderError(
        'OUTPUT_TOO_LARGE',
        `The model's text is longer than ${deps.textLimitBytes} bytes.`,
        false,
      );
    const parser = createParser({
      onEvent(ev) {
        if (done || failure) return;
        if (ev.data === '[DONE]') {
          done = true;
          return;
        }
        let chunk: {
          choices?: { delta?: { content?: unknown }; finish_reason?: unknown }[];
          error?: { message?: unknown };
          usage?: unknown;
        };
        try {
          chunk = JSON.parse(ev.data) as typeof chunk;
        } catch {
          failure = malformed('chat completion', 'an event that is not JSON');
          return;
        }
        if (chunk.error) {
          failure = new RenderError(
            'MODEL_FAILED',
            `The model failed: ${redact(textOf(chunk.error.message ?? 'no reason given')).slice(0, 300)}`,
            false,
          );
          return;
        }
        // the last chunk's; vLLM's continuous usage puts the counts so far on every chunk
        tokens = usageOf(chunk.usage) ?? tokens;
        const piece = chunk.choices?.[0]?.delta?.content;
        if (typeof piece === 'string' && piece !== '') {
          text += piece;
          ctx.textPiece?.(piece);
          bytes += Buffer.byteLength(piece);
          if (bytes > deps.textLimitBytes) failure = tooLarge();
          if (maxTokens) ctx.progress(Math.min(0.99, ++pieces / maxTokens));
        }
      },
    });
    const decoder = new TextDecoder();
    // The stream's own bytes are bounded too: events that carry no text (or a line that never ends)
    // cannot make this read go on growing the parser's buffer.
    let streamed = 0;
    const streamLimit = textAnswerLimit(deps.textLimitBytes) * 4;
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        streamed += chunk.byteLength;
        if (streamed > streamLimit) {
          failure ??= tooLarge();
          break;
        }
        parser.feed(decoder.decode(chunk, { stream: true }));
        if (done || failure) break;
      }
    } catch (e) {
      // The request's own time limit (set in call()) also ends the stream it is reading.
      if (!ctx.signal.aborted && Date.now() >= until - 50)
        throw new RenderError(
          'BACKEND_TIMEOUT',
          'The model server did not finish its answer in time.',
          true,
        );
      throw networkError(e, o);
    }
    // Set by the parser's callback or the read loop above.
    if (failure) throw failure;
    if (!done) throw malformed('chat completion', 'the stream ended before [DONE]');
    return { kind: 'text', text, ...(tokens ? { tokens } : {}) };
  }

  return {
    async run(inputs, ctx): Promise<RenderOutput> {
      const base = serverOf(b.urls, ctx);
      const until = Date.now() + ctx.timeLimitSeconds * 1000;
      const payload = body(inputs, ctx);
      const maxTokens = typeof payload.max_tokens === 'number' ? payload.max_tokens : null;
      const o: CallOptions = {
        signal: ctx.signal,
        timeoutMs: timeLeft(until),
        redact,
        what: 'chat completion',
      };
      return await metered(deps, ctx.signal, { driver: 'openai', kind: 'chat' }, async () => {
        const res = await withRetries(
          async () => {
            const r = await call(
              `${base}/chat/completions`,
              { method: 'POST', headers, body: JSON.stringify(payload) },
              { ...o, timeoutMs: timeLeft(until) },
            );
            if (!r.ok) throw await errorFor(r, o, [503]);
            return r;
          },
          { signal: ctx.signal, tries: 4, until },
        );
        // A server that ignores `stream` answers with one JSON completion.
        if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
          const j = (await readJson(res, o, textAnswerLimit(deps.textLimitBytes))) as {
            choices?: { message?: { content?: unknown } }[];
            usage?: unknown;
          };
          const content = j?.choices?.[0]?.message?.content;
          if (typeof content !== 'string')
            throw malformed('chat completion', 'no choices[0].message.content');
          const out = textOutput(content, deps.textLimitBytes);
          ctx.textPiece?.(content);
          const tokens = usageOf(j.usage);
          return tokens ? { ...out, tokens } : out;
        }
        return await readStream(res, ctx, o, maxTokens, until);
      });
    },

    async probe(url, signal) {
      const res = await fetch(`${url}/models`, { headers, signal });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`GET /models answered ${res.status}`);
    },
  };
}
