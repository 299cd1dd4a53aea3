// Parsing request bodies and query strings (objectBody, used by services too, is in domain/body.ts).
import { ApiError } from '../domain/errors.ts';

/** A query parameter given once as a string; repeated or absent parameters are refused or undefined. */
export function queryParam(query: unknown, name: string): string | undefined {
  const v = (query as Record<string, unknown> | undefined)?.[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') {
    throw new ApiError('INVALID_INPUT', `${name}: give it once.`, [
      { field: name, message: 'must be given once' },
    ]);
  }
  return v;
}

/** Deepest nesting of objects and arrays a request body may have (`{}` is 1). */
export const MAX_JSON_DEPTH = 64;

/** True when the JSON text nests objects/arrays deeper than `max`; brackets inside strings do not count. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/**
 * True when a parsed value has a `__proto__` key, or a `constructor` key holding an object with a
 * `prototype` key, anywhere: what Fastify's secure parser refuses, since code that merges such a body
 * into another object could change its prototype.
 */
function poisoned(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
      continue;
    }
    const o = v as Record<string, unknown>;
    if (Object.hasOwn(o, '__proto__')) return true;
    if (Object.hasOwn(o, 'constructor')) {
      const c = o.constructor;
      if (c !== null && typeof c === 'object' && Object.hasOwn(c, 'prototype')) return true;
    }
    for (const k of Object.keys(o)) stack.push(o[k]);
  }
  return false;
}

/**
 * Whether the text can hold such a key at all: it spells one, or escapes a character (a key's letters
 * can be written only as `\uXXXX` escapes). Most bodies do neither and skip the walk of the value.
 */
const mayBePoisoned = (text: string) =>
  text.includes('__proto__') || text.includes('constructor') || text.includes('\\u');

// JSON text is UTF-8 (RFC 8259): invalid bytes are refused, never silently replaced by U+FFFD.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Parses a request body as JSON (the application/json content-type parser); any refusal is 400 INVALID_REQUEST. */
export function parseJsonBody(bytes: Buffer): unknown {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new ApiError('INVALID_REQUEST', 'The body is not valid UTF-8.');
  }
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new ApiError(
      'INVALID_REQUEST',
      `The body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(
      'INVALID_REQUEST',
      text.length === 0 ? 'The body is empty; send a JSON object.' : 'The body is not valid JSON.',
    );
  }
  if (mayBePoisoned(text) && poisoned(value))
    throw new ApiError(
      'INVALID_REQUEST',
      'The body must not contain "__proto__" or "constructor.prototype" keys.',
    );
  return value;
}
