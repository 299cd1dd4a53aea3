// Requests held by `Prefer: wait` (docs/api.md "Waiting instead of polling"), by generation id.
// They are woken by the change notifications the generation cache already hears (one LISTEN
// connection per process, migrations/005 and 008), never by a polling loop. Bounded: past `max`
// held requests, or past `perAccount` of one account's (a tenth of them by default), a new one is
// answered at once, as without the header; so one account cannot hold them all and leave every
// other account's answered at once. Per process by nature: a held request is a connection this
// process holds, woken by this process's notifications, so the bound is of this process's memory
// and connections (N API processes hold at most N times as many, each within its own bound).
import { HeldCounts } from './bounded-map.ts';

export class Waiters {
  private byId = new Map<string, Set<() => void>>();
  private byAccount = new HeldCounts<string>();
  private held = 0;

  constructor(
    private max: number,
    private perAccount = Math.max(1, Math.floor(max / 10)),
  ) {}

  get size(): number {
    return this.held;
  }

  /**
   * Registers `wake` for changes of `id`, held for `accountId`; the returned function unregisters
   * it. Null when full, or when the account holds its most.
   */
  add(id: string, wake: () => void, accountId?: string): (() => void) | null {
    if (this.held >= this.max) return null;
    if (accountId !== undefined && this.byAccount.of(accountId) >= this.perAccount) return null;
    let set = this.byId.get(id);
    if (!set) this.byId.set(id, (set = new Set()));
    set.add(wake);
    this.held++;
    if (accountId !== undefined) this.byAccount.add(accountId);
    return () => {
      if (!set.delete(wake)) return;
      this.held--;
      if (set.size === 0 && this.byId.get(id) === set) this.byId.delete(id);
      if (accountId !== undefined) this.byAccount.release(accountId);
    };
  }

  /**
   * Reads with `read` until `final` holds of what it read, reading again at each change of `id`,
   * for at most `seconds` or until `closed` fires. `timedOut` is true when the time ran out with
   * `value` not final (read before the time ran out). Null, without reading, when the most
   * requests are held, in all or for `o.accountId`.
   */
  async watch<T>(
    id: string,
    o: { seconds: number; closed: AbortSignal; accountId?: string },
    read: () => Promise<T>,
    final: (value: T) => boolean,
  ): Promise<{ value: T; timedOut: boolean } | null> {
    let changed = false;
    let wake: (() => void) | null = null;
    const remove = this.add(
      id,
      () => {
        changed = true;
        wake?.();
      },
      o.accountId,
    );
    if (!remove) return null;
    let timer: NodeJS.Timeout | undefined;
    const over = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, o.seconds * 1000);
      o.closed.addEventListener('abort', () => resolve(), { once: true });
    });
    try {
      for (;;) {
        changed = false;
        const value = await read();
        if (final(value) || o.closed.aborted) return { value, timedOut: false };
        if (changed) continue; // changed while it was read: read again
        const woken = await Promise.race([
          new Promise<boolean>((r) => {
            wake = () => r(true);
          }),
          over.then(() => false),
        ]);
        wake = null;
        if (!woken) return { value, timedOut: true };
      }
    } finally {
      clearTimeout(timer);
      remove();
    }
  }

  /** A change of `id`; null: any generation may have changed (the notification connection came back). */
  wake(id: string | null): void {
    if (id === null) {
      for (const set of this.byId.values()) for (const f of set) f();
      return;
    }
    const set = this.byId.get(id);
    if (set) for (const f of set) f();
  }
}

/** The seconds of a `Prefer: wait=N` (1–60) among the header's preferences; undefined otherwise (RFC 7240: ignored). */
export function preferWait(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  for (const part of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const m = /^\s*wait\s*=\s*"?(\d{1,2})"?\s*(?:;.*)?$/i.exec(part);
    if (m) {
      const n = Number(m[1]);
      return n >= 1 && n <= 60 ? n : undefined;
    }
  }
  return undefined;
}
