// POST /openai/v1/responses: OpenAI's Responses API over the same renders as chat completions (the
// `openai` package's `responses.create`, the AI SDK's default `openai(model)`, LangChain's
// `useResponsesApi`). The answer is a `response` with one assistant `message` holding the render's
// text; with `stream: true`, the events OpenAI streams, in its order (response.created …
// response.output_text.delta … response.completed). The `id` is the generation's id.
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ChatStarted, FinalGeneration } from '../../services/chat.ts';
import { responsesUsage } from '../../services/chat-usage.ts';
import type { Ctx } from '../../web/context.ts';
import type { Principal } from '../../domain/principal.ts';
import { closedSignal, failure, sendFailure } from './answer.ts';
import { idempotencyOf } from './idempotency.ts';
import { diverged, sendStream, unavailable } from './chat.ts';

type Usage = ReturnType<typeof responsesUsage>;

/** The message item holding the text (OpenAI's `output[0]`). */
const message = (s: ChatStarted, text: string, status: string) => ({
  id: `msg_${s.id.slice(4)}`,
  type: 'message',
  status,
  role: 'assistant',
  content:
    status === 'completed' ? [{ type: 'output_text', text, annotations: [], logprobs: [] }] : [],
});

/** The `response` object, as OpenAI's API answers it. */
function response(
  s: ChatStarted,
  status: string,
  text: string,
  usage: Usage | null,
  error: { code: string; message: string } | null = null,
) {
  return {
    id: s.id,
    object: 'response',
    created_at: s.created,
    status,
    error,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: s.request.model.id,
    output: status === 'completed' ? [message(s, text, 'completed')] : [],
    output_text: text,
    parallel_tool_calls: false,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: null,
    text: { format: s.request.responseFormat ?? { type: 'text' } },
    tool_choice: 'none',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage,
    metadata: {},
  };
}

const usageOf = async (ctx: Ctx, s: ChatStarted, g: FinalGeneration) =>
  responsesUsage(await ctx.chat.tokens(s, g), s.id, s.costCents);

export function registerResponses(app: FastifyInstance, ctx: Ctx) {
  app.post('/responses', async (req, reply) => {
    const started = await ctx.chat.startResponse(req.principal, req.body, idempotencyOf(req));
    if (started.replayed) reply.header('idempotent-replayed', 'true');
    const closed = closedSignal(reply);
    if (started.request.stream) return stream(ctx, reply, started, req.principal, closed);
    const g = await ctx.chat.final(req.principal, started.id, closed);
    if (g.status !== 'succeeded') return sendFailure(reply, g);
    const text = g.textOutput ?? '';
    const body = response(started, 'completed', text, await usageOf(ctx, started, g));
    return reply.type('application/json; charset=utf-8').send(body);
  });
}

/** The Responses stream: typed events, each with its sequence number; no `[DONE]` at the end. */
function stream(ctx: Ctx, reply: FastifyReply, s: ChatStarted, p: Principal, closed: AbortSignal) {
  const out = new PassThrough();
  let seq = 0;
  const event = (type: string, data: Record<string, unknown>) =>
    out.write(
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`,
    );
  const item = message(s, '', 'in_progress');
  const at = { item_id: item.id, output_index: 0, content_index: 0 };
  event('response.created', { response: response(s, 'in_progress', '', null) });
  event('response.in_progress', { response: response(s, 'in_progress', '', null) });
  event('response.output_item.added', { output_index: 0, item });
  event('response.content_part.added', {
    ...at,
    part: { type: 'output_text', text: '', annotations: [] },
  });
  const delta = (piece: string) =>
    event('response.output_text.delta', { ...at, delta: piece, logprobs: [] });
  const followed = ctx.chat.follow(s.id, delta);
  const failed = (error: { code: string; message: string }) =>
    event('response.failed', { response: response(s, 'failed', '', null, error) });
  const done = async (g: FinalGeneration) => {
    followed.stop();
    if (g.status !== 'succeeded') return void failed(failure(g));
    const text = g.textOutput ?? '';
    const rest = followed.rest(text);
    if (rest === null) return void failed(diverged(g.id).error);
    if (rest) delta(rest);
    event('response.output_text.done', { ...at, text, logprobs: [] });
    const part = { type: 'output_text', text, annotations: [], logprobs: [] };
    event('response.content_part.done', { ...at, part });
    event('response.output_item.done', { output_index: 0, item: message(s, text, 'completed') });
    const usage = await usageOf(ctx, s, g);
    event('response.completed', { response: response(s, 'completed', text, usage) });
  };
  void ctx.chat
    .final(p, s.id, closed)
    .then(done)
    .then(
      () => out.end(),
      (e: unknown) => {
        followed.stop();
        reply.log.error({ err: e }, 'responses stream failed');
        failed(unavailable().error);
        out.end();
      },
    );
  return sendStream(reply, out);
}
