// Secret values taken out of text (docs/backends.md "Secrets"): what a model server sends (its
// answer, its streamed pieces, its errors) may quote the key it was given, and none of it may leave
// the process with that key in it.
//
// The rule, the same for a whole text and for a text that arrives in pieces: every character that
// belongs to an occurrence of a secret (occurrences may overlap, a secret may be part of another)
// is removed, and each run of such characters becomes one `[secret]`. Replacing one secret after
// another would not do: a shorter one replaced first can leave the tail of a longer one standing,
// and a later one could match inside an earlier `[secret]`.
//
// A stream holds back the tail of what it was given that could be the start of a secret (never
// more than the longest secret − 1 characters; usually nothing, so ordinary text goes on at once),
// and a run of secret characters such a tail would extend, so that no prefix of a secret is passed
// on before the text after it shows it is not one; `end()` passes on the rest. The pieces passed
// on, put together, are exactly the whole text redacted at once: a stream of a chat answer and the
// stored answer agree (queue/streamed-text.ts relies on it).

/** What a run of secret characters becomes. */
export const SECRET_MARK = '[secret]';

/**
 * Values shorter than this are not searched for: they would cut ordinary words out of every answer
 * (and are no secret worth the name).
 */
export const MIN_SECRET_CHARS = 4;

/** The forms a value takes in text: as it is, percent-encoded (in a URL), escaped in JSON. */
export function secretForms(value: string): string[] {
  if (value.length < MIN_SECRET_CHARS) return [];
  const forms = new Set([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)]);
  return [...forms];
}

export class SecretText {
  private readonly forms: string[];
  /** The longest form's length: how far a stream looks back. */
  readonly longest: number;

  constructor(values: Iterable<string>) {
    const all = new Set<string>();
    for (const v of values) for (const f of secretForms(v)) all.add(f);
    this.forms = [...all];
    this.longest = this.forms.reduce((n, f) => Math.max(n, f.length), 0);
  }

  /**
   * The runs of secret characters in `text`, merged where occurrences overlap, in order:
   * [start, end) pairs.
   */
  private runs(text: string): [number, number][] {
    const found: [number, number][] = [];
    for (const f of this.forms) {
      for (let at = text.indexOf(f); at >= 0; at = text.indexOf(f, at + 1))
        found.push([at, at + f.length]);
    }
    if (found.length < 2) return found;
    found.sort((a, b) => a[0] - b[0]);
    const merged: [number, number][] = [found[0]];
    for (const [s, e] of found.slice(1)) {
      const last = merged[merged.length - 1];
      if (s < last[1]) last[1] = Math.max(last[1], e);
      else merged.push([s, e]);
    }
    return merged;
  }

  /** `text` up to `upTo`, with each run before it (all end there or earlier) replaced. */
  private static replaced(text: string, runs: [number, number][], upTo: number): string {
    let out = '';
    let from = 0;
    for (const [s, e] of runs) {
      if (e > upTo) break;
      out += text.slice(from, s) + SECRET_MARK;
      from = e;
    }
    return out + text.slice(from, upTo);
  }

  /** The text with every secret removed; the same string when it holds none. */
  redact(text: string): string {
    if (this.forms.length === 0) return text;
    const runs = this.runs(text);
    return runs.length === 0 ? text : SecretText.replaced(text, runs, text.length);
  }

  /** A redacting stream: what is certain goes on to `emit`; call `end()` after the last piece. */
  stream(emit: (piece: string) => void): SecretStream {
    return new SecretStream(this, emit);
  }

  /**
   * Where the first occurrence that the text still to come could complete may start: the start of
   * the longest tail of `held` that begins one of the forms (at most longest − 1 characters from
   * the end); `held.length` when no tail does.
   */
  private openFrom(held: string): number {
    let from = held.length;
    for (const f of this.forms) {
      const first = f[0];
      for (let at = held.indexOf(first, Math.max(0, held.length - f.length + 1)); at >= 0;) {
        if (at >= from) break;
        if (f.startsWith(held.slice(at))) {
          from = at;
          break;
        }
        at = held.indexOf(first, at + 1);
      }
    }
    return from;
  }

  /**
   * How much of `held` (text not yet passed on, which follows text already passed on) can be
   * passed on now, and what it becomes. What may still turn out to be a secret waits: a tail that
   * begins one, and a run of secret characters that such a tail would extend.
   */
  settle(held: string, final: boolean): { take: number; text: string } {
    const runs = this.runs(held);
    let take = final ? held.length : this.openFrom(held);
    // Never between the two halves of a surrogate pair: each piece is whole characters.
    const code = held.charCodeAt(take - 1);
    if (!final && take > 0 && code >= 0xd800 && code <= 0xdbff) take--;
    for (const [s, e] of runs)
      if (e > take) {
        take = Math.min(take, s);
        break;
      }
    return { take, text: SecretText.replaced(held, runs, take) };
  }
}

export class SecretStream {
  private held = '';

  constructor(
    private readonly secrets: SecretText,
    private readonly emit: (piece: string) => void,
  ) {}

  push(piece: string): void {
    if (this.secrets.longest === 0) {
      if (piece !== '') this.emit(piece);
      return;
    }
    this.held += piece;
    this.pass(false);
  }

  /** The text is complete: what was held back goes now. */
  end(): void {
    this.pass(true);
  }

  private pass(final: boolean): void {
    if (this.held === '') return;
    const { take, text } = this.secrets.settle(this.held, final);
    if (take === 0) return;
    this.held = this.held.slice(take);
    if (text !== '') this.emit(text);
  }
}
