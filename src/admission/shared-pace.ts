// A pace an account keeps across every API process (docs/limits.md "Admission across processes"):
// units a second after a burst, as one schedule per account in PostgreSQL (admission_paces), so N
// processes give an account one bound, not N. The schedule is the time its account is clear of
// what it took (a virtual-scheduling token bucket, GCRA): a request's turn is that time, never
// more than a burst behind now; it is let in when its turn is at most `maxWaitMs` away, and its
// cost is paid after it.
//
// Without a statement per request: a booking also leases a slice of the capacity that is free now
// (never future capacity), which this process spends in memory on the account's next requests,
// each let in at once. A lease starts at the size of the request that took it and doubles with
// each booking while the previous one is still live, up to `maxLeaseMs`; it is dropped after
// LEASE_TTL_MS. A request its lease does not cover books the rest of its cost on the shared
// schedule (the lease's remainder counted towards it). A refusal is remembered until the
// schedule's end it saw: further requests before it are refused without a statement (the
// schedule's end only moves later).
//
// What this guarantees with N processes: every unit let in was booked on the one schedule, so over
// any span Δ an account gets at most burst + rate·(Δ + LEASE_TTL_MS) + one request's cost,
// whatever N is (the LEASE_TTL_MS term: a lease spent up to that late). With one process it is
// exact as long as the account sends before its lease lapses. Unspent leases are lost to the
// account: at most N·maxLeaseMs of schedule per LEASE_TTL_MS, so a lease is a quarter of the burst
// at most. Waiting is per process: at most `maxWaiting` of an account's requests wait here at once
// (each holds its body in this process's memory).
import type { Db } from '../db/pool.ts';
import { bookPace } from '../db/admission-paces.ts';
import { BoundedMap, HeldCounts } from './bounded-map.ts';

/** How long a lease may be spent after it was taken. */
export const LEASE_TTL_MS = 1_000;

export interface PaceShape {
  /** The schedule's row: 'uploads' or 'bodies'. */
  name: string;
  /** Schedule one unit takes, ms (1000 / units a second). */
  msPerUnit: number;
  /** How far behind now a schedule may lag, ms: the burst. */
  spanMs: number;
  /** How far away a turn may be and still be let in, ms (0: only at once). */
  maxWaitMs: number;
  /** An account's requests waiting for their turn in this process, at most. */
  maxWaiting: number;
  /** The largest lease, ms of the schedule. */
  maxLeaseMs: number;
  /** Accounts whose leases and refusals this process remembers. */
  maxSubjects: number;
}

/** Let in after `waitMs` (0: at once), or refused: its turn is `refusedMs` away. */
export type Booking = { waitMs: number } | { refusedMs: number };

/** An account's state in this process. */
interface Local {
  /** The slice of the schedule leased and not spent yet: [from, to). */
  from: number;
  to: number;
  /** When the lease lapses, ms. */
  expires: number;
  /** The schedule's end as last seen: no turn comes before it. */
  clearAt: number;
  /** The last lease asked, ms of the schedule. */
  askMs: number;
  /** A booking in flight: the account's next requests wait for it, then decide in order. */
  pending: Promise<void> | null;
}

/** Nothing worth remembering: no lease, no refusal, no booking in flight. */
const idle = (s: Local, now: number) => !s.pending && s.expires <= now && s.clearAt <= now;

export class SharedPace {
  private subjects: BoundedMap<string, Local>;
  private waiting = new HeldCounts<string>();

  constructor(
    private db: Db,
    readonly shape: PaceShape,
  ) {
    this.subjects = new BoundedMap(shape.maxSubjects, idle);
  }

  /**
   * Books `units` for `subject`. Decided here, synchronously, when a lease covers it or a refusal
   * remembered refuses it; otherwise by one statement. A booking let in with a wait counts as
   * waiting until the caller calls waited().
   */
  book(subject: string, units: number, nowMs = Date.now()): Booking | Promise<Booking> {
    const s = this.subjects.get(subject) ?? this.fresh(subject, nowMs);
    if (s.pending) return s.pending.then(() => this.book(subject, units, nowMs));
    const need = units * this.shape.msPerUnit;
    if (s.expires > nowMs && s.to - s.from >= need) {
      s.from += need;
      return { waitMs: 0 };
    }
    const mayWait = this.mayWait(subject);
    if (s.clearAt > nowMs + mayWait) return { refusedMs: s.clearAt - nowMs };
    return this.remote(subject, s, need, mayWait, nowMs);
  }

  /** A booking that waited its turn is through waiting. */
  waited(subject: string): void {
    this.waiting.release(subject);
  }

  private mayWait(subject: string): number {
    return this.waiting.of(subject) >= this.shape.maxWaiting ? 0 : this.shape.maxWaitMs;
  }

  private fresh(subject: string, nowMs: number): Local {
    const s: Local = { from: 0, to: 0, expires: 0, clearAt: 0, askMs: 0, pending: null };
    this.subjects.set(subject, s, nowMs);
    return s;
  }

  private async remote(
    subject: string,
    s: Local,
    need: number,
    mayWait: number,
    now: number,
  ): Promise<Booking> {
    let release!: () => void;
    s.pending = new Promise((r) => (release = r));
    try {
      const live = s.expires > now;
      const credit = live ? Math.max(0, s.to - s.from) : 0;
      const ask = Math.min(live ? Math.max(2 * s.askMs, need) : need, this.shape.maxLeaseMs);
      const r = await bookPace(this.db, {
        pace: this.shape.name,
        subject,
        nowMs: now,
        spanMs: this.shape.spanMs,
        needMs: need - credit,
        mayWaitMs: mayWait,
        askMs: ask,
      });
      // most recently booked last, so that the least recently booked are forgotten first
      const current = this.subjects.get(subject);
      if (current === undefined || current === s) this.subjects.set(subject, s, now);
      if (!r.admitted) {
        s.clearAt = Math.max(s.clearAt, r.startAt);
        return { refusedMs: r.startAt - now };
      }
      s.clearAt = r.clearAt;
      s.from = r.clearAt - r.leased;
      s.to = r.clearAt;
      s.expires = now + LEASE_TTL_MS;
      s.askMs = ask;
      const waitMs = Math.max(0, r.startAt - now);
      // counted before any other booking of the account is decided
      if (waitMs > 0) this.waiting.add(subject);
      return { waitMs };
    } finally {
      s.pending = null;
      release();
    }
  }
}
