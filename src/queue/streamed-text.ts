// What one /openai/v1 stream sends of a render's text, from the pieces it hears (live-text.ts), so that
// the stream's content ends equal to the generation's textOutput.
//
// The rule:
//   - A piece is sent on only when it continues what the client already has. The reader keeps the text
//     of the current attempt from its start; a piece placed after a gap in it (pieces published before
//     this stream listened, in another process, or a notification lost) makes the reader follow that
//     attempt no further.
//   - A new attempt starts its text again: it is followed silently while it repeats what the client
//     already has, and sent on past that. An attempt older than the current one is ignored. An attempt
//     whose text differs from what was sent is followed no further.
//   - When the generation is final, `rest(textOutput)` is what remains to send: the stored text past
//     what the client has. When the client already has text that is not the start of textOutput (a
//     render retried after part of its answer was streamed, whose retry wrote a different text), no
//     chunk can take it back: `rest` is null and the stream ends with an error event instead of a
//     finished answer, and the text is the generation's at /v1/generations/{id}.
// A stream that ends with `finish_reason: "stop"` therefore carries exactly textOutput, always.
import type { Piece } from './live-text.ts';

/** The attempt number of an attempt key (`<generation id>-<n>`); NaN when it has none. */
function attemptNumber(attempt: string): number {
  return Number(attempt.slice(attempt.lastIndexOf('-') + 1));
}

export class StreamedText {
  /** What the client has been sent. */
  private sent = '';
  private attempt = '';
  /** The current attempt's text known from its start, without a gap. */
  private text = '';
  /** The current attempt is followed no further (a gap, or a text other than the one sent). */
  private dropped = false;
  private older = new Set<string>();

  constructor(private emit: (piece: string) => void) {}

  piece(p: Piece): void {
    if (p.attempt !== this.attempt) {
      if (this.older.has(p.attempt)) return;
      const [was, now] = [attemptNumber(this.attempt), attemptNumber(p.attempt)];
      if (this.attempt && now < was) {
        this.older.add(p.attempt);
        return;
      }
      if (this.attempt) this.older.add(this.attempt);
      this.attempt = p.attempt;
      this.text = '';
      this.dropped = false;
    }
    if (this.dropped) return;
    if (p.offset > this.text.length) {
      this.dropped = true;
      return;
    }
    const from = this.text.length;
    const added = p.text.slice(from - p.offset);
    if (!added) return;
    this.text += added;
    // The part of the new text that the client already has must be the same.
    const upTo = Math.min(this.text.length, this.sent.length);
    if (from < upTo && this.text.slice(from, upTo) !== this.sent.slice(from, upTo)) {
      this.dropped = true;
      return;
    }
    if (this.text.length > this.sent.length) {
      const out = this.text.slice(this.sent.length);
      this.sent = this.text;
      this.emit(out);
    }
  }

  /** What remains to send of the final `text`; null when the client has text that is not its start. */
  rest(text: string): string | null {
    return text.startsWith(this.sent) ? text.slice(this.sent.length) : null;
  }
}
