// The Idempotency-Key header (IETF draft "The Idempotency-Key HTTP Header Field"): its value is a
// Structured Field string (RFC 8941), `"8e03978e-40d5-43e8-bc93-6894a57f9324"`; many clients send the
// bare token instead. Both are accepted and mean the same key: the quoted form is unquoted here, once,
// for every route that honours the header, so `"k"` and `k` can never make two charges.
const BARE = /^[\x21-\x7e]{1,255}$/;
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\]){1,255})"$/;

/** The key a header value stands for; undefined when there is none or it is not a valid key. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const value = header.trim();
  const sf = SF_STRING.exec(value);
  if (sf) {
    const key = sf[1].replace(/\\(["\\])/g, '$1');
    return BARE.test(key) ? key : undefined;
  }
  // Quoted but not a valid string (`""`, an unescaped quote inside): not a key.
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) return undefined;
  return BARE.test(value) ? value : undefined;
}
