// The Idempotency-Key header (IETF draft "The Idempotency-Key HTTP Header Field"): its value is a
// Structured Field item (RFC 8941) whose bare item is a string, `"8e03978e-…"`, possibly followed by
// parameters (`"K";x=1`), which carry nothing for us and are ignored: `"K";x=1` is the key `K`, so a
// client that adds one cannot make a second charge. Many clients send the bare token instead; it stays
// accepted as it always was. A value that starts as a string but does not parse as one (`"K`,
// `"K"junk`) is refused rather than taken literally. The quoted form is unquoted here, once, for
// every route that honours the header, so `"k"` and `k` can never make two charges.
const BARE = /^[\x21-\x7e]{1,255}$/;
// An sf-string: printable ASCII, `"` and `\` escaped.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"/;
// RFC 8941 3.1.2 parameters: `;` OWS key [ `=` bare-item ], the bare item an integer, decimal,
// string, token, byte sequence or boolean.
const BARE_ITEM = [
  /-?\d{1,15}(?:\.\d{1,3})?/.source, // integer or decimal
  /"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*"/.source, // string
  /[A-Za-z*][\w!#$%&'*+\-.^`|~:/]*/.source, // token
  /:[A-Za-z0-9+/=]*:/.source, // byte sequence
  /\?[01]/.source, // boolean
].join('|');
const PARAM = new RegExp(`^;[ ]*[a-z*][a-z0-9_\\-.*]*(?:=(?:${BARE_ITEM}))?`);

/** Parameters after an item (RFC 8941 3.1.2); false when `rest` is not a list of them. */
function onlyParameters(rest: string): boolean {
  let r = rest;
  while (r !== '') {
    const m = PARAM.exec(r);
    if (!m) return false;
    r = r.slice(m[0].length);
  }
  return true;
}

/** The key a header value stands for; undefined when there is none or it is not a valid key. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const value = header.trim();
  if (value.startsWith('"')) {
    const sf = SF_STRING.exec(value);
    if (!sf || !onlyParameters(value.slice(sf[0].length))) return undefined;
    const key = sf[1].replace(/\\(["\\])/g, '$1');
    return BARE.test(key) ? key : undefined;
  }
  return BARE.test(value) ? value : undefined;
}
