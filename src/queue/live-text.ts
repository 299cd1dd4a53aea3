// The text of chat renders as their backend streams it, for the /openai/v1 answers of this process: a
// render running on this process's worker publishes each piece, then its whole text once the render
// is recorded as succeeded; an answer waiting here for that generation hears of both at once, instead
// of waiting for the stored generation. Nothing is kept once the render ends (its final text is in the
// generation). A render running on another process is not seen here: its answer comes from the
// stored generation (a stream then carries the final text in one piece).
export interface TextListener {
  piece?: (piece: string) => void;
  /** The render succeeded with this text, and is recorded so. */
  done?: (text: string) => void;
}

interface Entry {
  text: string;
  attempt: string;
  listeners: Set<TextListener>;
}

export class LiveText {
  private byId = new Map<string, Entry>();

  private entry(id: string): Entry {
    let e = this.byId.get(id);
    if (!e) this.byId.set(id, (e = { text: '', attempt: '', listeners: new Set() }));
    return e;
  }

  /** A piece of the text of `attempt` of generation `id`; a new attempt starts the text again. */
  publish(id: string, attempt: string, piece: string): void {
    const e = this.entry(id);
    if (e.attempt !== attempt) {
      e.attempt = attempt;
      e.text = '';
    }
    e.text += piece;
    for (const l of e.listeners) l.piece?.(piece);
  }

  /** `attempt` was recorded as the generation's success, with `text`. */
  succeeded(id: string, text: string): void {
    const e = this.byId.get(id);
    if (e) for (const l of e.listeners) l.done?.(text);
  }

  /** The attempt is over (whatever its outcome): its pieces are no longer kept. */
  end(id: string, attempt: string): void {
    const e = this.byId.get(id);
    if (!e || e.attempt !== attempt) return;
    if (e.listeners.size === 0) this.byId.delete(id);
    else e.text = '';
  }

  /**
   * Calls `l.piece` with the text so far, then with each new piece, and `l.done` at success; returns
   * the function that stops it. Pieces published before this call come in the first call.
   */
  subscribe(id: string, l: TextListener): () => void {
    const e = this.entry(id);
    if (e.text) l.piece?.(e.text);
    e.listeners.add(l);
    return () => {
      e.listeners.delete(l);
      if (e.listeners.size === 0 && this.byId.get(id) === e) this.byId.delete(id);
    };
  }
}
