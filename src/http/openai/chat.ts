// POST /openai/v1/chat/completions: a render of a catalog text model, answered as OpenAI's
// `chat.completion` when it is final, or with `stream: true` as `chat.completion.chunk` server-sent
// events ending in `data: [DONE]`. The answer's `id` is the generation's id: the same render is at
// /v1/generations/{id}, with its charge; `usage` counts its tokens and says what it cost.
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ChatStarted, FinalGeneration } from '../../services/chat.ts';
import { chatUsage } from '../../services/chat-usage.ts';
import type { Ctx } from '../../web/context.ts';
import type { Principal } from '../../domain/principal.ts';
import { openAiErrorBody } from './errors.ts';
import { closedSignal, failure, failureBody, sendFailure } from './answer.ts';
import { idempotencyOf } from './idempotency.ts';

async function completion(ctx: Ctx, s: ChatStarted, g: FinalGeneration) {
  const text = g.textOutput ?? '';
  return {
    id: s.id,
    object: 'chat.completion',
    created: s.created,
    model: s.request.model.id,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: chatUsage(await ctx.chat.tokens(s, g), s.id, s.costCents),
  };
}

export function registerChatCompletions(app: FastifyInstance, ctx: Ctx) {
  app.post('/chat/completions', async (req, reply) => {
    const started = await ctx.chat.start(req.principal, req.body, idempotencyOf(req));
    if (started.replayed) reply.header('idempotent-replayed', 'true');
    const closed = closedSignal(reply);
    if (started.request.stream) return stream(ctx, reply, started, req.principal, closed);
    const g = await ctx.chat.final(req.principal, started.id, closed);
    if (g.status !== 'succeeded') return sendFailure(reply, g);
    return reply.type('application/json; charset=utf-8').send(await completion(ctx, started, g));
  });
}

/** The stream's end when the render's text diverged from what was streamed (streamed-text.ts). */
export const diverged = (id: string) =>
  openAiErrorBody(
    502,
    'STREAM_DIVERGED',
    `The render ${id} was retried after part of its answer was streamed, and the retry wrote a different text; the generation's textOutput at /v1/generations/${id} is the answer.`,
  );

/** The stream's end when the service could not learn the outcome. */
export const unavailable = () =>
  openAiErrorBody(503, 'SERVICE_UNAVAILABLE', 'The service is briefly unavailable; retry shortly.');

/** Sends a server-sent event stream. */
export function sendStream(reply: FastifyReply, out: PassThrough) {
  return reply
    .header('cache-control', 'no-cache')
    .header('x-accel-buffering', 'no')
    .type('text/event-stream; charset=utf-8')
    .send(out);
}

/**
 * The answer as server-sent events: the text as the backend streams it, wherever its render runs
 * (LiveText), and whatever of the final text was not sent yet once the generation is final; with
 * `stream_options.include_usage`, a last chunk with no choices and the usage.
 */
function stream(ctx: Ctx, reply: FastifyReply, s: ChatStarted, p: Principal, closed: AbortSignal) {
  const out = new PassThrough();
  const base = {
    id: s.id,
    object: 'chat.completion.chunk',
    created: s.created,
    model: s.request.model.id,
  };
  const event = (data: unknown) => out.write(`data: ${JSON.stringify(data)}\n\n`);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    event({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  chunk({ role: 'assistant', content: '' });
  const followed = ctx.chat.follow(s.id, (piece) => chunk({ content: piece }));
  const stop = followed.stop;
  const done = async (g: FinalGeneration) => {
    stop();
    if (g.status !== 'succeeded') return void event(failureBody(failure(g)));
    // The final text is the stored one: what the live pieces did not carry goes now. A render
    // retried after part of its answer was streamed, whose retry wrote another text, cannot take
    // those pieces back: an error, never an answer other than textOutput (streamed-text.ts).
    const text = g.textOutput ?? '';
    const rest = followed.rest(text);
    if (rest === null) return void event(diverged(g.id));
    if (rest) chunk({ content: rest });
    chunk({}, 'stop');
    if (s.request.includeUsage) {
      const usage = chatUsage(await ctx.chat.tokens(s, g), s.id, s.costCents);
      event({ ...base, choices: [], usage });
    }
  };
  void ctx.chat
    .final(p, s.id, closed)
    .then(done)
    .then(
      () => out.end('data: [DONE]\n\n'),
      (e: unknown) => {
        stop();
        reply.log.error({ err: e }, 'chat stream failed');
        event(unavailable());
        out.end();
      },
    );
  return sendStream(reply, out);
}
