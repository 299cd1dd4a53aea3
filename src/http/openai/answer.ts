// What the chat and responses fronts share: the signal of a client gone, and the answer to a render
// that did not succeed. A failed render is final (its charge was returned) and the same call would
// make a new render: it is answered so that none of OpenAI's client libraries retries it at their
// default settings (docs/api.md "OpenAI-compatible endpoints"):
//   openai (Node, Python)  retries 408, 409, 429 and every 5xx unless `x-should-retry: false`;
//   AI SDK (@ai-sdk/provider APICallError.isRetryable)  retries 408, 409, 429 and every 5xx, and
//     reads no header;
//   LangChain (@langchain/core AsyncCaller, up to 6 retries)  retries every status except 400–407,
//     409 and 413.
// The one status none of them retries that still says "this request cannot succeed as sent" is 400;
// its body keeps OpenAI's error shape with `type: "server_error"` and `code` the render's own error
// code, so a caller can tell a failed render from a bad request, and `x-should-retry: false` says it
// to OpenAI's SDKs explicitly.
import type { FastifyReply } from 'fastify';
import type { FinalGeneration } from '../../services/chat.ts';
import { openAiErrorBody } from './errors.ts';

/** An AbortSignal that fires when the client's connection closes before the answer is sent. */
export function closedSignal(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => ac.abort());
  return ac.signal;
}

export interface Failure {
  status: number;
  type?: string;
  code: string;
  message: string;
}

/** Why a final generation has no text, as OpenAI's error fields. */
export function failure(g: FinalGeneration): Failure {
  if (g.status === 'queued') {
    return {
      status: 408,
      code: 'REQUEST_TIMEOUT',
      message: `The render ${g.id} was not final within 60 s; send the request again with the same Idempotency-Key to keep waiting, or poll /v1/generations/${g.id}.`,
    };
  }
  const code = g.error?.code ?? 'RENDER_FAILED';
  return {
    status: 400,
    type: 'server_error',
    code,
    message: `The render ${g.id} ${g.status === 'refunded' ? 'was refunded' : 'failed'} (${code}): ${g.error?.message ?? 'no reason given'}; its charge was returned.`,
  };
}

/** The error body of a failure (also a stream's error event). */
export const failureBody = (f: Failure) =>
  openAiErrorBody(f.status, f.code, f.message, null, f.type);

/** Sends a failure as the answer. */
export function sendFailure(reply: FastifyReply, g: FinalGeneration): FastifyReply {
  const f = failure(g);
  if (f.status === 400) reply.header('x-should-retry', 'false');
  return reply.code(f.status).type('application/json; charset=utf-8').send(failureBody(f));
}
