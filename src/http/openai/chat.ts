// POST /openai/v1/chat/completions: a render of a catalog text model, answered as OpenAI's
// `chat.completion` when it is final, or with `stream: true` as `chat.completion.chunk` server-sent
// events ending in `data: [DONE]`. The answer's `id` is the generation's id: the same render is at
// /v1/generations/{id}, with its charge.
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { idempotencyKeyOf } from '../../web/idempotency-key.ts';
import type { ChatStarted, FinalGeneration } from '../../services/chat.ts';
import type { Ctx } from '../../web/context.ts';
import type { Principal } from '../../domain/principal.ts';
import { openAiErrorBody } from './errors.ts';

/** An AbortSignal that fires when the client's connection closes before the answer is sent. */
function closedSignal(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => ac.abort());
  return ac.signal;
}

/**
 * Why a final generation has no text, as an ApiError-like triple for OpenAI's error body. A render
 * that failed (or was refunded while the request waited) is 502: what a model server sends is never
 * this service's 500. Its `code` is the generation's error code.
 */
function failure(g: FinalGeneration): { status: number; code: string; message: string } {
  if (g.status === 'queued') {
    return {
      status: 408,
      code: 'REQUEST_TIMEOUT',
      message: `The render ${g.id} was not final within 60 s; send the request again with the same Idempotency-Key to keep waiting, or poll /v1/generations/${g.id}.`,
    };
  }
  const code = g.error?.code ?? 'RENDER_FAILED';
  return {
    status: 502,
    code,
    message: `The render ${g.id} ${g.status === 'refunded' ? 'was refunded' : 'failed'} (${code}): ${g.error?.message ?? 'no reason given'}`,
  };
}

function completion(s: ChatStarted, g: FinalGeneration) {
  return {
    id: s.id,
    object: 'chat.completion',
    created: s.created,
    model: s.request.model.id,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: g.textOutput ?? '', refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
  };
}

export function registerChatCompletions(app: FastifyInstance, ctx: Ctx) {
  app.post('/chat/completions', async (req, reply) => {
    const sent = req.headers['idempotency-key'];
    const idem = idempotencyKeyOf(sent);
    if (sent !== undefined && idem === undefined) {
      throw new ApiError(
        'IDEMPOTENCY_KEY_REQUIRED',
        'An Idempotency-Key must be 1 to 255 printable ASCII characters (e.g. a UUID).',
      );
    }
    const started = await ctx.chat.start(req.principal, req.body, idem);
    if (started.replayed) reply.header('idempotent-replayed', 'true');
    const closed = closedSignal(reply);
    if (started.request.stream) return stream(ctx, reply, started, req.principal, closed);
    const g = await ctx.chat.final(req.principal, started.id, closed);
    if (g.status !== 'succeeded') {
      const f = failure(g);
      // The render is final: a retry with the same Idempotency-Key gets this answer again, and one
      // without makes a new charge. OpenAI's SDKs retry every 5xx unless told not to (`x-should-retry`).
      if (f.status === 502) reply.header('x-should-retry', 'false');
      return reply
        .code(f.status)
        .type('application/json; charset=utf-8')
        .send(openAiErrorBody(f.status, f.code, f.message));
    }
    return reply.type('application/json; charset=utf-8').send(completion(started, g));
  });
}

/**
 * The answer as server-sent events: the text as the backend streams it, wherever its render runs
 * (LiveText), and whatever of the final text was not sent yet once the generation is final.
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
  void ctx.chat.final(p, s.id, closed).then(
    (g) => {
      stop();
      if (g.status !== 'succeeded') {
        const f = failure(g);
        event(openAiErrorBody(f.status, f.code, f.message));
      } else {
        // The final text is the stored one: what the live pieces did not carry goes now. A render
        // retried after part of its answer was streamed, whose retry wrote another text, cannot take
        // those pieces back: an error, never an answer other than textOutput (streamed-text.ts).
        const rest = followed.rest(g.textOutput ?? '');
        if (rest === null) {
          event(
            openAiErrorBody(
              502,
              'STREAM_DIVERGED',
              `The render ${g.id} was retried after part of its answer was streamed, and the retry wrote a different text; the generation's textOutput at /v1/generations/${g.id} is the answer.`,
            ),
          );
        } else {
          if (rest) chunk({ content: rest });
          chunk({}, 'stop');
        }
      }
      out.end('data: [DONE]\n\n');
    },
    (e: unknown) => {
      stop();
      reply.log.error({ err: e }, 'chat stream failed');
      event(
        openAiErrorBody(
          503,
          'SERVICE_UNAVAILABLE',
          'The service is briefly unavailable; retry shortly.',
        ),
      );
      out.end();
    },
  );
  return reply
    .header('cache-control', 'no-cache')
    .header('x-accel-buffering', 'no')
    .type('text/event-stream; charset=utf-8')
    .send(out);
}
