// Sends the pieces of chat renders of this process's worker to the /openai/v1 streams of other processes
// (live-text.ts), as notifications on the generation-change channel, which every API process already
// LISTENs on (its generation cache's connection): no connection or LISTEN of its own.
//
// Frugal by construction: only pieces that no answer of this process follows come here, only of renders
// made from a chat request; pieces are collected over `windowMs` (a few milliseconds) and go together,
// consecutive pieces of one attempt merged into one notification, all of a window in one statement;
// with one statement in flight at a time (AfterCommitNotifier), a fast model or many renders at once
// make at most about one statement per window per process, not one per token. A notification's payload
// is under 8000 bytes: a longer piece is split (at character boundaries), each part with its offset.
import { GENERATION_CHANGED_CHANNEL } from '../db/channels.ts';
import { AfterCommitNotifier } from '../db/notify-after-commit.ts';
import type { Db } from '../db/pool.ts';
import { encodePiece, type Piece, type TextRelay } from './live-text.ts';

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; kept well under. */
export const PAYLOAD_MAX_BYTES = 7_900;

/**
 * The payloads that carry `p`: one when it fits, else parts of at most `max` bytes each (none when an
 * id leaves no room: the streams then end with the stored text, as after any missed piece).
 */
export function piecePayloads(id: string, p: Piece, max = PAYLOAD_MAX_BYTES): string[] {
  const whole = encodePiece(id, p);
  if (Buffer.byteLength(whole) <= max) return [whole];
  // The room for text once the rest of a payload is written (with the largest offset any part has).
  const room =
    max - Buffer.byteLength(encodePiece(id, { ...p, offset: p.offset + p.text.length, text: '' }));
  if (room < 16) return [];
  const out: string[] = [];
  let start = 0;
  let end = 0;
  let used = 0;
  for (const ch of p.text) {
    // What the character takes inside the JSON string (escaped or UTF-8).
    const size = Buffer.byteLength(JSON.stringify(ch)) - 2;
    if (used + size > room) {
      out.push(encodePiece(id, { ...p, offset: p.offset + start, text: p.text.slice(start, end) }));
      start = end;
      used = 0;
    }
    used += size;
    end += ch.length;
  }
  out.push(encodePiece(id, { ...p, offset: p.offset + start, text: p.text.slice(start) }));
  return out;
}

export class LiveTextRelay implements TextRelay {
  private batch = new Map<string, Piece[]>();
  private timer: NodeJS.Timeout | null = null;
  private notifier: { send(payload: string): void };
  private windowMs: number;

  /** Sends on `db` (asynchronous commit), or through `notifier` (tests). */
  constructor(o: { db: Db; windowMs?: number } | { notifier: { send(payload: string): void } }) {
    this.notifier =
      'notifier' in o ? o.notifier : new AfterCommitNotifier(o.db, GENERATION_CHANGED_CHANNEL);
    this.windowMs = 'windowMs' in o && o.windowMs !== undefined ? o.windowMs : 5;
  }

  send(id: string, p: Piece): void {
    let list = this.batch.get(id);
    if (!list) this.batch.set(id, (list = []));
    const last = list.at(-1);
    if (last && last.attempt === p.attempt && last.offset + last.text.length === p.offset)
      last.text += p.text;
    else list.push({ ...p });
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.windowMs);
      this.timer.unref();
    }
  }

  /** Sends what was collected (at the end of each window, and at stop). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.batch;
    this.batch = new Map();
    for (const [id, list] of batch)
      for (const p of list) for (const payload of piecePayloads(id, p)) this.notifier.send(payload);
  }
}
