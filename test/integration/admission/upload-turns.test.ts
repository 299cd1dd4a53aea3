// UploadTurns (src/admission/upload-turns.ts) on the real database: an account's uploads at most
// so many turns a second after a burst of as many, each taking turns by its estimated decode; past
// it they wait their turn, up to 2 s and 4 at once, else a 429. One process decides exactly as the
// schedule does; the turns are the account's on every process (two-processes.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeTurns,
  MAX_WAIT_MS,
  MAX_WAITING,
  TURN_MS,
  UploadTurns,
} from '../../../src/admission/upload-turns.ts';
import type { Db } from '../../../src/db/pool.ts';
import { freshDatabase } from '../../helpers/db.ts';

let db: Db;
let drop: () => Promise<void>;
beforeAll(async () => ({ db, drop } = await freshDatabase()));
afterAll(async () => drop());

const outcome = (p: Promise<void>) =>
  p.then(
    () => 'turn',
    (e: { code?: string; headers?: Record<string, string> }) =>
      `${e.code} ${e.headers?.['retry-after']}`,
  );

describe('UploadTurns', () => {
  it('gives a burst at once, then turns at its rate, and refuses past 2 s of waiting', async () => {
    expect(MAX_WAIT_MS).toBe(2_000);
    const turns = new UploadTurns(db, 1);
    const t = Date.now();
    const first = turns.take('acc_a', 1, t);
    // 1 a second: the first at once, then one second apart; a third would wait 2 s, a fourth 3 s
    const second = outcome(turns.take('acc_a', 1, t));
    const third = outcome(turns.take('acc_a', 1, t));
    expect(await outcome(turns.take('acc_a', 1, t))).toBe('RATE_LIMITED 3');
    // another account keeps its own burst
    expect(await outcome(turns.take('acc_b', 1, t))).toBe('turn');
    await first;
    const t0 = performance.now();
    expect(await second).toBe('turn');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(900);
    expect(await third).toBe('turn');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1_900);
  });

  it('lets at most 4 of an account wait at once', async () => {
    expect(MAX_WAITING).toBe(4);
    const turns = new UploadTurns(db, 10);
    const t = Date.now();
    const got = await Promise.all(
      Array.from({ length: 16 }, () => outcome(turns.take('acc_w', 1, t))),
    );
    // the burst of 10, four waiting 100-400 ms, then refusals
    expect(got).toEqual([...Array(14).fill('turn'), 'RATE_LIMITED 1', 'RATE_LIMITED 1']);
  });

  it('takes a burst larger than a second of turns when given one', async () => {
    const turns = new UploadTurns(db, 5, 20); // a turn every 200 ms, 20 at once
    const t = Date.now();
    const got = await Promise.all(
      Array.from({ length: 25 }, () => outcome(turns.take('acc_l', 1, t))),
    );
    // the burst of 20 at once, four waiting 200-800 ms, the next refused
    expect(got).toEqual([...Array(24).fill('turn'), 'RATE_LIMITED 1']);
  });

  it('starts a quiet account again with its whole burst', async () => {
    const turns = new UploadTurns(db, 2);
    const t = Date.now() - 60_000;
    await turns.take('acc_q', 1, t);
    await turns.take('acc_q', 1, t);
    const now = Date.now();
    const got = await Promise.all(
      [turns.take('acc_q', 1, now), turns.take('acc_q', 1, now)].map(outcome),
    );
    expect(got).toEqual(['turn', 'turn']);
  });

  it('books the turns of an upload from the ones after it: a large image goes, the next waits', async () => {
    const turns = new UploadTurns(db, 2); // a turn every 500 ms, a burst of 2
    const t = Date.now();
    // an idle account's first upload goes at once whatever it costs: its 5 turns are owed after it
    expect(await outcome(turns.take('acc_i', 5, t))).toBe('turn');
    // one turn of its burst paid for one of them; the other four are owed, 2 s: the next upload
    // waits exactly the most it may, one after it would wait 2.5 s and is refused
    const second = outcome(turns.take('acc_i', 1, t));
    expect(await outcome(turns.take('acc_i', 1, t))).toBe('RATE_LIMITED 3');
    const t0 = performance.now();
    expect(await second).toBe('turn');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1_900);
    // a cost under one turn is one turn: the second of 1 a second, 1.5 s early, is 2.5 s away
    const small = new UploadTurns(db, 1);
    await small.take('acc_s', 0.01, t);
    expect(await outcome(small.take('acc_s', 0.01, t - 1_500))).toBe('RATE_LIMITED 3');
  });

  it('estimates a turn per TURN_MS of decode, WebP dearest, JPEG cheapest', () => {
    expect(TURN_MS).toBe(7);
    // a 200×200 PNG is about one turn; a 12-megapixel photo is 6 (JPEG), 22 (PNG), 44 (WebP)
    expect(decodeTurns('png', 200 * 200)).toBeCloseTo(1.07, 2);
    expect(decodeTurns('jpeg', 12e6)).toBeCloseTo(6.14, 2);
    expect(decodeTurns('png', 12e6)).toBeCloseTo(21.57, 2);
    expect(decodeTurns('webp', 12e6)).toBeCloseTo(43.86, 2);
    // an unknown format is estimated as the dearest
    expect(decodeTurns('gif', 12e6)).toBe(decodeTurns('webp', 12e6));
  });
});
