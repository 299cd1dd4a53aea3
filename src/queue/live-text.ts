// The text of chat renders as their backend streams it, for the /openai/v1 streams of this process: a
// render running on this process's worker publishes each piece; a stream answering for that generation
// here reads them as they come instead of waiting for the final text. Nothing is kept once the render
// ends (its final text is in the generation). A render running on another process is not seen here:
// its stream then carries the final text in one piece.
type Listener = (piece: string) => void;

interface Entry { text: string; attempt: string; listeners: Set<Listener> }

export class LiveText {
  private byId = new Map<string, Entry>();

  /** A piece of the text of `attempt` of generation `id`; a new attempt starts the text again. */
  publish(id: string, attempt: string, piece: string): void {
    let e = this.byId.get(id);
    if (!e || e.attempt !== attempt) {
      const listeners = e?.listeners ?? new Set<Listener>();
      this.byId.set(id, e = { text: '', attempt, listeners });
    }
    e.text += piece;
    for (const f of e.listeners) f(piece);
  }

  /** The attempt is over (whatever its outcome): its pieces are no longer kept. */
  end(id: string, attempt: string): void {
    const e = this.byId.get(id);
    if (e && e.attempt === attempt && e.listeners.size === 0) this.byId.delete(id);
    else if (e && e.attempt === attempt) e.text = '';
  }

  /**
   * Calls `listener` with the text so far, then with each new piece; returns the function that stops
   * it. Pieces published before this call come in the first call, so none is missed or repeated.
   */
  subscribe(id: string, listener: Listener): () => void {
    let e = this.byId.get(id);
    if (!e) this.byId.set(id, e = { text: '', attempt: '', listeners: new Set() });
    if (e.text) listener(e.text);
    e.listeners.add(listener);
    const entry = e;
    return () => {
      entry.listeners.delete(listener);
      if (entry.listeners.size === 0 && this.byId.get(id) === entry) this.byId.delete(id);
    };
  }
}
