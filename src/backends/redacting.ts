// The one place where what a backend sends leaves the backend layer (docs/backends.md "Secrets"):
// every backend the registry hands out is wrapped here, so that no `${env:NAME}` value reaches the
// worker in a text output, a streamed piece of one, or an error, whichever driver made it and
// however the driver itself redacts. Drivers scrub their error messages already (before cutting
// them to length); a successful answer was passed on as the server sent it until this wrapper.
//
// Streamed pieces go through a holdback (domain/secret-text.ts): a secret split across pieces is
// never passed on in part, and the pieces put together equal the redacted whole text, so a chat
// stream ends equal to the stored textOutput. Progress is a number, never text: nothing to scrub.
import type { Secrets } from './secrets.ts';
import type { ModelBackend, RenderContext, RenderOutput } from './types.ts';

/** How deep a chain of causes is scrubbed: enough for any error a driver wraps. */
const CAUSE_DEPTH = 4;

/**
 * Removes the secrets from an error's message and stack, and its causes', in place: a renderer's
 * unexpected error is logged with all three (queue/outcome.ts). The error keeps its class and
 * fields (a RenderError its code and retryability).
 */
export function scrubError(e: unknown, secrets: Secrets, depth = 0): unknown {
  if (!(e instanceof Error) || depth > CAUSE_DEPTH) return e;
  for (const field of ['message', 'stack'] as const) {
    const text = e[field];
    if (typeof text !== 'string') continue;
    const clean = secrets.redact(text);
    // Defined, not assigned: a DOMException's message is a getter without a setter. An error that
    // cannot be changed (frozen) is passed on as it is rather than replaced by this failure.
    if (clean !== text)
      try {
        Object.defineProperty(e, field, { value: clean, writable: true, configurable: true });
      } catch {
        /* frozen */
      }
  }
  if (e.cause !== undefined) scrubError(e.cause, secrets, depth + 1);
  return e;
}

/**
 * `backend` with everything it sends scrubbed of the secrets; what it only says of its inputs
 * (`inputUrls`, for test renders' address checks) passes as it is.
 */
export function redacting(backend: ModelBackend, secrets: Secrets): ModelBackend {
  return {
    ...(backend.inputUrls ? { inputUrls: backend.inputUrls.bind(backend) } : {}),
    async run(inputs, ctx): Promise<RenderOutput> {
      const stream = ctx.textPiece ? secrets.answerStream(ctx.textPiece) : null;
      // The same context but for its pieces; not a copy, whose spread would read `workDir` (a
      // getter that makes the scratch directory) for every render.
      const piece = { value: (p: string) => stream?.push(p) };
      const inner = stream ? (Object.create(ctx, { textPiece: piece }) as RenderContext) : ctx;
      let out: RenderOutput;
      try {
        out = await backend.run(inputs, inner);
      } catch (e) {
        throw scrubError(e, secrets);
      }
      if (out.kind !== 'text') return out;
      // What was held back of the stream goes before the text is recorded, so that a stream that
      // follows this render has every piece when it hears of the success.
      stream?.end();
      const text = secrets.redactAnswer(out.text);
      return text === out.text ? out : { ...out, text };
    },
  };
}
