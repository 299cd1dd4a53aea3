// Live studio sessions recently read, kept in memory so that a page view asks the database nothing
// for who is signed in (a page's only other statement, on most pages its only one).
//
// Kept correct two ways:
//   - What decides whether a session opens anything (signed out, ended, switched to another
//     account; a membership added, changed or removed; a person's email or second factor; an
//     account's name or its second-factor requirement) is written rarely, and every such statement
//     notifies SESSIONS_CHANNEL at its commit (the triggers of src/db/sql/session_changed.sql), from
//     any process: each process then drops every entry. A state-changing request answered by this
//     process drops them before its answer is sent (forget/clear, from the HTTP edge), so the next
//     page reads its own writes without waiting for the notification.
//   - The balance shown with the session changes with every charge, which must not notify (a NOTIFY
//     serialises its transaction's commit with every other notifying one: db/notify-after-commit.ts).
//     An entry is therefore served for ENTRY_MS only, and a charge made through this process drops
//     its account's entries: a charge made by another process shows within a second.
// Like the generation cache, it serves only while its LISTEN connection is up (notifications sent
// while it is down are lost), and a read that was under way when anything was dropped is not kept,
// since it may predate the change.
import { CacheListener } from '../db/listener.ts';
import { SESSIONS_CHANNEL } from '../db/channels.ts';
import type { SessionRow } from '../db/studio-sessions.ts';

/** How long an entry is served after its read: the most a balance changed elsewhere lags. */
export const ENTRY_MS = 1_000;

interface Entry {
  row: SessionRow;
  /** performance.now() after which it is read again. */
  until: number;
}

export class SessionCache {
  private entries = new Map<string, Entry>();
  /** The keys of each account's entries, to drop them on a charge. */
  private byAccount = new Map<string, Set<string>>();
  /** Goes up on every drop: a read begun under an older epoch is not kept. */
  private epoch = 0;
  private listener: CacheListener;

  constructor(
    databaseUrl: string,
    private maxEntries: number,
    log: (msg: string) => void,
    private entryMs = ENTRY_MS,
  ) {
    this.listener = new CacheListener(
      databaseUrl,
      [SESSIONS_CHANNEL],
      () => this.clear(),
      () => this.clear(),
      log,
    );
  }

  start(): Promise<void> {
    return this.listener.start();
  }

  stop(): Promise<void> {
    this.clear();
    return this.listener.stop();
  }

  /** The row kept for session `key` (its id's hash), if it may still be served. */
  get(key: string): SessionRow | null {
    const hit = this.entries.get(key);
    if (!hit) return null;
    if (performance.now() > hit.until) {
      this.drop(key, hit.row.account_id);
      return null;
    }
    return hit.row;
  }

  /** A mark to hand to keep() with the row read after it. */
  begin(): number {
    return this.epoch;
  }

  /** Keeps a live session's row read since begin() returned `epoch`, unless anything was dropped since. */
  keep(key: string, row: SessionRow, epoch: number): void {
    if (!this.listener.listening || epoch !== this.epoch) return;
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      // Maps iterate in insertion order: drop the oldest entry.
      const [oldest, e] = this.entries.entries().next().value!;
      this.drop(oldest, e.row.account_id);
    }
    this.entries.set(key, { row, until: performance.now() + this.entryMs });
    if (row.account_id !== null) {
      let keys = this.byAccount.get(row.account_id);
      if (!keys) this.byAccount.set(row.account_id, (keys = new Set()));
      keys.add(key);
    }
  }

  /** Drops session `key` (signed out through this process). */
  forgetSession(key: string): void {
    const hit = this.entries.get(key);
    if (hit) this.drop(key, hit.row.account_id);
    this.epoch++;
  }

  /** Drops the sessions of an account whose balance this process just changed. */
  forgetAccount(accountId: string): void {
    const keys = this.byAccount.get(accountId);
    if (keys) for (const key of keys) this.entries.delete(key);
    this.byAccount.delete(accountId);
    this.epoch++;
  }

  /** Drops everything: a change that may concern any session. */
  clear(): void {
    this.entries.clear();
    this.byAccount.clear();
    this.epoch++;
  }

  private drop(key: string, accountId: string | null): void {
    this.entries.delete(key);
    if (accountId === null) return;
    const keys = this.byAccount.get(accountId);
    keys?.delete(key);
    if (keys?.size === 0) this.byAccount.delete(accountId);
  }
}
