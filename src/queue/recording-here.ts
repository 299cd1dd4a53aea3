// Outcomes this process's worker is recording at this moment. An outcome's statement notifies the
// render's change at its commit (migrations/005's trigger), and the notification reaches this
// process's listener before the statement's own answer does: waking the held requests and event
// streams then would read the row (`gen-get`) at the very moment a chat answer is due, and again
// when the worker's own word follows (its onFinal). So a change heard for a render whose outcome is
// being recorded here is held until the statement has answered, then passed on: by onFinal when the
// render became final, else here. Only the wake waits: the poll cache drops its copy at once, so no
// stale row is ever served (services/generation-cache.ts).
export class RecordingHere {
  /** Per render: statements under way, and whether a change was heard meanwhile. */
  private ids = new Map<string, { n: number; heard: boolean }>();

  /** `wake`: passes on a held change (the held requests' and streams' wake). */
  constructor(private wake: (id: string) => void) {}

  /** An outcome statement of render `id` is about to be sent. */
  begin(id: string): void {
    const e = this.ids.get(id);
    if (e) e.n++;
    else this.ids.set(id, { n: 1, heard: false });
  }

  /** A change of `id` was heard: true when it is held (an outcome of it is under way here). */
  hold(id: string): boolean {
    const e = this.ids.get(id);
    if (!e) return false;
    e.heard = true;
    return true;
  }

  /**
   * The statement answered (or failed). `final`: it made the render final, and onFinal wakes the
   * waiters; otherwise a change heard meanwhile is passed on now.
   */
  end(id: string, final: boolean): void {
    const e = this.ids.get(id);
    if (!e) return;
    if (--e.n > 0) return;
    this.ids.delete(id);
    if (e.heard && !final) this.wake(id);
  }
}
