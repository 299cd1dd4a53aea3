// The pieces of a quote answered before the framework (fast-answers.ts): its small body read whole,
// and a bounded cache of answers by the body's exact bytes. A quote without upload inputs is a pure
// function of its body and the catalog (fixed for the process's life): clients that ask for the same
// quote again, as integrations do before each render, get the answer without parsing, validation or
// pricing. Anything the cache cannot answer is computed by the route's own quoteAnswer.
import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';

/** Bodies longer than this go to Fastify (a quote's body is a few hundred bytes). */
export const FAST_BODY_MAX = 4096;
/** Answers kept; the oldest goes first. At most FAST_BODY_MAX + its answer each: a few MB. */
export const QUOTE_CACHE_ENTRIES = 1000;

/**
 * The body of a request whose body is already whole in its buffer, as a small body sent with its headers
 * is by the loop's check phase (setImmediate). Null: still arriving (readBody waits for it) or aborted.
 */
export function bodyIfWhole(req: IncomingMessage): Buffer | null {
  if (!req.complete || req.destroyed) return null;
  return (req.read() as Buffer | null) ?? Buffer.alloc(0);
}

/**
 * Reads a request's body whole: `then` gets its bytes at its end, or null when the request ended
 * otherwise (aborted, its socket destroyed at its deadline): there is then no one to answer.
 */
export function readBody(req: IncomingMessage, then: (bytes: Buffer | null) => void): void {
  buffer(req).then(then, () => then(null));
}

/** The stream Fastify parses a body read here from (its preParsing hook's payload). */
export function payloadOf(bytes: Buffer): Readable {
  const s = new PassThrough();
  s.end(bytes);
  return s;
}

/** Quote answers by the exact bytes of their bodies, oldest out first. */
export class QuoteCache {
  private readonly answers = new Map<string, string>();

  /** The cache's key of a body: its bytes, one character each (distinct bytes, distinct keys). */
  static keyOf(bytes: Buffer): string {
    return bytes.toString('latin1');
  }

  get(key: string): string | undefined {
    return this.answers.get(key);
  }

  set(key: string, json: string): void {
    if (this.answers.size >= QUOTE_CACHE_ENTRIES) {
      this.answers.delete(this.answers.keys().next().value as string);
    }
    this.answers.set(key, json);
  }
}
