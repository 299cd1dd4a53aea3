// The text of chat renders as their backend streams it, for the /openai/v1 streams waiting on them.
//
// In this process: a render running on this process's worker publishes each piece, then its whole text
// once the render is recorded as succeeded; an answer waiting here for that generation hears of both at
// once, directly (no database round trip), instead of waiting for the stored generation.
//
// Across processes (an api process and a worker process, or two `serve` processes): a piece of a render
// created by a chat request (`/openai/v1`) that no answer of the rendering process follows is handed to
// the relay (live-text-relay.ts), which batches pieces over a few milliseconds and sends them as
// notifications on the channel the API processes already LISTEN on for generation changes; `receive`
// takes them there and delivers them to the answers of this process that follow that generation.
//
// Each piece says where it goes: its attempt and its offset in that attempt's text (a new attempt
// starts the text again). Pieces sent before an answer began to listen in another process are not
// replayed, and a notification can be lost while a LISTEN connection reconnects: the reader
// (streamed-text.ts) sees the gap by the offset, follows that attempt no further, and ends with what
// the stored text adds. Nothing is kept once the render ends (its final text is in the generation).
import type { ReportedTokens } from '../backends/types.ts';

export interface Piece {
  /** The attempt that wrote it (`<generation id>-<attempt number>`). */
  attempt: string;
  /** Where it starts in that attempt's text (UTF-16 code units). */
  offset: number;
  text: string;
}

export interface TextListener {
  piece?: (piece: Piece) => void;
  /** The render succeeded with this text (and the counts its backend reported), recorded so. */
  done?: (text: string, tokens?: ReportedTokens) => void;
}

/** Where pieces go that no answer of this process follows (live-text-relay.ts). */
export interface TextRelay {
  send(id: string, piece: Piece): void;
}

interface Entry {
  text: string;
  attempt: string;
  /** An attempt of this process is rendering it (kept until `end`, for its offsets). */
  rendering: boolean;
  listeners: Set<TextListener>;
}

/** Notifications that carry pieces start so; their generation id runs to the first space. */
export const TEXT_PAYLOAD_PREFIX = 'text:';

export class LiveText {
  private byId = new Map<string, Entry>();
  private relay: TextRelay | null = null;

  /** This process renders: pieces nobody here follows go to `relay`. */
  relayTo(relay: TextRelay): void {
    this.relay = relay;
  }

  private entry(id: string): Entry {
    let e = this.byId.get(id);
    if (!e)
      this.byId.set(id, (e = { text: '', attempt: '', rendering: false, listeners: new Set() }));
    return e;
  }

  /**
   * A piece of the text of `attempt` of generation `id`; a new attempt starts the text again. With
   * `relayed` (a render made from a chat request), a piece that no answer of this process follows
   * goes to the relay, for an answer in another process.
   */
  publish(id: string, attempt: string, piece: string, relayed = false): void {
    const e = this.entry(id);
    if (e.attempt !== attempt) {
      e.attempt = attempt;
      e.text = '';
    }
    e.rendering = true;
    const p: Piece = { attempt, offset: e.text.length, text: piece };
    e.text += piece;
    if (e.listeners.size > 0) for (const l of e.listeners) l.piece?.(p);
    else if (relayed) this.relay?.send(id, p);
  }

  /**
   * A notification heard on the generation-change channel: true when it carried pieces (delivered to
   * this process's answers that follow its generation), false when it is about something else.
   */
  receive(payload: string): boolean {
    if (!payload.startsWith(TEXT_PAYLOAD_PREFIX)) return false;
    const space = payload.indexOf(' ');
    if (space < 0) return true;
    const e = this.byId.get(payload.slice(TEXT_PAYLOAD_PREFIX.length, space));
    if (!e || e.listeners.size === 0) return true;
    const p = decodePiece(payload.slice(space + 1));
    if (p) for (const l of e.listeners) l.piece?.(p);
    return true;
  }

  /** `attempt` was recorded as the generation's success, with `text`. */
  succeeded(id: string, text: string, tokens?: ReportedTokens): void {
    const e = this.byId.get(id);
    if (e) for (const l of e.listeners) l.done?.(text, tokens);
  }

  /** The attempt is over (whatever its outcome): its pieces are no longer kept. */
  end(id: string, attempt: string): void {
    const e = this.byId.get(id);
    if (!e || e.attempt !== attempt) return;
    if (e.listeners.size === 0) this.byId.delete(id);
    else {
      e.text = '';
      e.rendering = false;
    }
  }

  /**
   * Calls `l.piece` with the text so far of a render of this process, then with each new piece (from
   * this process or another), and `l.done` at a success here; returns the function that stops it.
   */
  subscribe(id: string, l: TextListener): () => void {
    const e = this.entry(id);
    if (e.text) l.piece?.({ attempt: e.attempt, offset: 0, text: e.text });
    e.listeners.add(l);
    return () => {
      e.listeners.delete(l);
      if (e.listeners.size === 0 && !e.rendering && this.byId.get(id) === e) this.byId.delete(id);
    };
  }
}

/** The notification payload of a piece: `text:<id> ["<attempt>",<offset>,"<text>"]`. */
export function encodePiece(id: string, p: Piece): string {
  return `${TEXT_PAYLOAD_PREFIX}${id} ${JSON.stringify([p.attempt, p.offset, p.text])}`;
}

function decodePiece(json: string): Piece | null {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length !== 3) return null;
  const [attempt, offset, text] = v as unknown[];
  if (typeof attempt !== 'string' || typeof text !== 'string') return null;
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) return null;
  return { attempt, offset, text };
}
