// The statements on `admission_paces` (migrations/026): one schedule per pace and account, booked
// and leased by src/admission/shared-pace.ts. Times are milliseconds since the Unix epoch, as the
// calling process's clock gives them (as rate windows are), fractional where a pace's units are.
import type { Queryable } from './pool.ts';

// The arithmetic of one booking, on the row as it is once locked (a parallel booking waits for the
// row, then sees what it booked), or on an absent row as a full burst:
//   start  = greatest(clear_at, now - span)     the request's turn: never more than a burst behind
//   ok     = start <= now + may_wait             let in, now or after a wait it may make
//   after  = start + need                       what it owes is paid for after it
//   leased = least(ask, greatest(now - after, 0))  a lease only of capacity free now, never future
// A refused booking changes nothing but the last booking's report.
const BOOK = `
INSERT INTO admission_paces AS p (pace, subject, clear_at, full_at, start_at, leased, admitted)
SELECT $1::text, $2::text, a + l, a + l + $4::float8, s, l, true
FROM (SELECT $3::float8 - $4::float8 AS s) s0,
  LATERAL (SELECT s + $5::float8 AS a) a0,
  LATERAL (SELECT least($7::float8, greatest($3::float8 - a, 0)) AS l) l0
ON CONFLICT (pace, subject) DO UPDATE SET (clear_at, full_at, start_at, leased, admitted) = (
  SELECT CASE WHEN ok THEN a + l ELSE p.clear_at END,
         CASE WHEN ok THEN a + l ELSE p.clear_at END + $4::float8,
         s, CASE WHEN ok THEN l ELSE 0 END, ok
  FROM (SELECT greatest(p.clear_at, $3::float8 - $4::float8) AS s) s0,
    LATERAL (SELECT s <= $3::float8 + $6::float8 AS ok, s + $5::float8 AS a) a0,
    LATERAL (SELECT least($7::float8, greatest($3::float8 - a, 0)) AS l) l0)
RETURNING clear_at, start_at, leased, admitted`;

export interface PaceBooking {
  /** Let in (at `startAt`, now or later); refused otherwise. */
  admitted: boolean;
  /** The request's turn on the schedule (when refused: the turn it would have had). */
  startAt: number;
  /** The end of what the schedule holds booked, the lease included. */
  clearAt: number;
  /** Of the schedule, the ms just before `clearAt` leased to the caller. */
  leased: number;
}

/**
 * Books `needMs` of the schedule of `pace` for `subject` at `nowMs`, let in when its turn is at
 * most `mayWaitMs` away, with a lease of at most `askMs` of what is free now.
 */
export async function bookPace(
  q: Queryable,
  o: {
    pace: string;
    subject: string;
    nowMs: number;
    spanMs: number;
    needMs: number;
    mayWaitMs: number;
    askMs: number;
  },
): Promise<PaceBooking> {
  const { rows } = await q.query<{
    clear_at: number;
    start_at: number;
    leased: number;
    admitted: boolean;
  }>({
    name: 'pace-book',
    text: BOOK,
    values: [o.pace, o.subject, o.nowMs, o.spanMs, o.needMs, o.mayWaitMs, o.askMs],
  });
  const r = rows[0];
  return { admitted: r.admitted, startAt: r.start_at, clearAt: r.clear_at, leased: r.leased };
}

/** Removes the schedules full again before `beforeMs`: an absent row is a full burst too. */
export async function prunePaces(q: Queryable, beforeMs: number): Promise<void> {
  await q.query('DELETE FROM admission_paces WHERE full_at < $1', [beforeMs]);
}
