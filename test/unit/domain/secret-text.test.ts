// Secret values out of text (src/domain/secret-text.ts): a whole text, and the same text in pieces
// split anywhere, come out the same; no piece passed on ever shows part of a secret; secrets that
// overlap or hold one another leave nothing of either; ordinary text is untouched.
import { describe, expect, it } from 'vitest';
import { SECRET_MARK, SecretText } from '../../../src/domain/secret-text.ts';

const KEY = 'sk-test-secret-0123';

/** The rule written plainly: mark every character inside an occurrence, one mark per run. */
function reference(text: string, forms: string[]): string {
  const hit = new Array<boolean>(text.length).fill(false);
  const starts = new Array<boolean>(text.length).fill(false);
  for (const f of forms)
    for (let at = text.indexOf(f); at >= 0; at = text.indexOf(f, at + 1)) {
      for (let i = at; i < at + f.length; i++) hit[i] = true;
      starts[at] = true;
    }
  let out = '';
  for (let i = 0; i < text.length; i++) {
    if (!hit[i]) out += text[i];
    // A run starts where the character before is no secret, or where an occurrence begins just
    // as another ended (touching occurrences stay two marks).
    else if (i === 0 || !hit[i - 1] || (starts[i] && !inside(forms, text, i))) out += SECRET_MARK;
  }
  return out;
}
/** Whether an occurrence covers both i-1 and i. */
function inside(forms: string[], text: string, i: number): boolean {
  for (const f of forms)
    for (let at = text.indexOf(f); at >= 0 && at < i; at = text.indexOf(f, at + 1))
      if (at + f.length > i) return true;
  return false;
}

/** Streams `pieces`, checking after each that what went out is a start of the whole, redacted. */
function streamed(s: SecretText, pieces: string[]): string {
  const whole = s.redact(pieces.join(''));
  let out = '';
  const stream = s.stream((p) => {
    expect(p).not.toBe('');
    out += p;
  });
  for (const p of pieces) {
    stream.push(p);
    expect(whole.startsWith(out), `${JSON.stringify(out)} of ${JSON.stringify(whole)}`).toBe(true);
  }
  stream.end();
  return out;
}

describe('a whole text', () => {
  it('loses each secret, in its plain, percent-encoded and JSON-escaped forms', () => {
    const pw = 'p@ss/wo"rd:1';
    const s = new SecretText([KEY, pw]);
    expect(s.redact(`key ${KEY}, url ${encodeURIComponent(pw)}, json ${JSON.stringify(pw)}`)).toBe(
      `key ${SECRET_MARK}, url ${SECRET_MARK}, json "${SECRET_MARK}"`,
    );
  });

  it('leaves ordinary text as it is (the same string); ignores values under 4 characters', () => {
    const s = new SecretText(['abc', 'x', '', KEY]);
    const text = 'abc x: an answer with no secret in it, é 🦊 abc';
    expect(s.redact(text)).toBe(text);
    expect(new SecretText([]).redact(text)).toBe(text);
  });

  it('secrets inside, overlapping or touching one another leave nothing of any of them', () => {
    const s = new SecretText(['abcd', 'abcdefgh', 'fghijk', 'cret']);
    expect(s.redact('xx abcdefghijk yy')).toBe(`xx ${SECRET_MARK} yy`);
    expect(s.redact('abcdabcd')).toBe(`${SECRET_MARK}${SECRET_MARK}`);
    // A secret that is part of the mark itself is not found in the marks made.
    expect(s.redact('secret abcd')).toBe(`se${SECRET_MARK} ${SECRET_MARK}`);
    expect(new SecretText(['aaaa']).redact('aaaaaa b')).toBe(`${SECRET_MARK} b`);
  });

  it('agrees with the rule written plainly, on many random texts', () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) >>> 0) % n;
    const word = (n: number) => Array.from({ length: n }, () => 'abc'[rand(3)]).join('');
    for (let round = 0; round < 500; round++) {
      const forms = Array.from({ length: 1 + rand(3) }, () => word(4 + rand(4)));
      const text = word(rand(40));
      expect(new SecretText(forms).redact(text), `${forms.join(',')} in ${text}`).toBe(
        reference(text, forms),
      );
    }
  });
});

describe('a text in pieces', () => {
  const answer = `Your key is ${KEY}; keep it (${KEY}). Done.`;

  it('split in two at every place, passes on exactly the whole text redacted', () => {
    const s = new SecretText([KEY]);
    for (let at = 0; at <= answer.length; at++) {
      const out = streamed(s, [answer.slice(0, at), answer.slice(at)]);
      expect(out).toBe(`Your key is ${SECRET_MARK}; keep it (${SECRET_MARK}). Done.`);
    }
  });

  it('split in three at every pair of places, and one character at a time', () => {
    const s = new SecretText([KEY, 'secret-0123-extra']);
    const text = `a ${KEY}-extra b`;
    for (let i = 0; i <= text.length; i++)
      for (let j = i; j <= text.length; j++)
        expect(streamed(s, [text.slice(0, i), text.slice(i, j), text.slice(j)])).toBe(
          s.redact(text),
        );
    expect(streamed(s, [...answer])).toBe(s.redact(answer));
  });

  it('random texts in random pieces agree with the whole', () => {
    let seed = 11;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) >>> 0) % n;
    const word = (n: number) => Array.from({ length: n }, () => 'ab'[rand(2)]).join('');
    for (let round = 0; round < 500; round++) {
      const s = new SecretText(Array.from({ length: 1 + rand(3) }, () => word(4 + rand(5))));
      const text = word(rand(60));
      const pieces: string[] = [];
      for (let at = 0; at < text.length;) {
        const n = 1 + rand(8);
        pieces.push(text.slice(at, at + n));
        at += n;
      }
      expect(streamed(s, pieces)).toBe(s.redact(text));
    }
  });

  it('passes ordinary text at once, holds only what may begin a secret, splits no character', () => {
    const none = new SecretText([]);
    const got: string[] = [];
    const stream = none.stream((p) => got.push(p));
    stream.push('Shot 1: ');
    expect(got).toEqual(['Shot 1: ']);
    // With a secret known: only a tail that could begin it waits for what follows.
    const keyed = new SecretText([KEY]);
    const out: string[] = [];
    const k = keyed.stream((p) => out.push(p));
    k.push('Shot 1: a wide view.\n');
    expect(out).toEqual(['Shot 1: a wide view.\n']);
    k.push('Shot 2: sk-te');
    expect(out.at(-1)).toBe('Shot 2: ');
    k.push('a. ');
    expect(out.at(-1)).toBe('sk-tea. ');
    const s = new SecretText(['wxyz']);
    const pieces: string[] = [];
    const fox = s.stream((p) => pieces.push(p));
    for (const p of ['ab🦊', 'cdef', 'gh']) fox.push(p);
    fox.end();
    expect(pieces.join('')).toBe('ab🦊cdefgh');
    // No piece ends in the first half of a surrogate pair, nor starts with the second.
    for (const p of pieces) expect(/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(p)).toBe(false);
  });
});
