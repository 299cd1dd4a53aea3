// UploadTurns (src/services/upload-turns.ts): an account's uploads at most so many a second after a
// burst of as many; past it they wait their turn, up to 2 s and 4 at once, else a 429.
import { describe, expect, it } from 'vitest';
import { MAX_WAIT_MS, MAX_WAITING, UploadTurns } from '../../../src/services/upload-turns.ts';

const outcome = (p: Promise<void>) =>
  p.then(
    () => 'turn',
    (e: { code?: string; headers?: Record<string, string> }) =>
      `${e.code} ${e.headers?.['retry-after']}`,
  );

describe('UploadTurns', () => {
  it('gives a burst at once, then turns at its rate, and refuses past 2 s of waiting', async () => {
    expect(MAX_WAIT_MS).toBe(2_000);
    const turns = new UploadTurns(1);
    const t = Date.now();
    const first = turns.take('acc_a', t);
    // 1 a second: the first at once, then one second apart; a third would wait 2 s, a fourth 3 s
    const second = outcome(turns.take('acc_a', t));
    const third = outcome(turns.take('acc_a', t));
    expect(await outcome(turns.take('acc_a', t))).toBe('RATE_LIMITED 3');
    // another account keeps its own burst
    expect(await outcome(turns.take('acc_b', t))).toBe('turn');
    await first;
    const t0 = performance.now();
    expect(await second).toBe('turn');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(900);
    expect(await third).toBe('turn');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1_900);
  });

  it('lets at most 4 of an account wait at once', async () => {
    expect(MAX_WAITING).toBe(4);
    const turns = new UploadTurns(10);
    const t = Date.now();
    const got = await Promise.all(Array.from({ length: 16 }, () => outcome(turns.take('acc', t))));
    // the burst of 10, four waiting 100-400 ms, then refusals
    expect(got).toEqual([...Array(14).fill('turn'), 'RATE_LIMITED 1', 'RATE_LIMITED 1']);
  });

  it('starts a quiet account again with its whole burst', async () => {
    const turns = new UploadTurns(2);
    const t = Date.now() - 60_000;
    await turns.take('acc', t);
    await turns.take('acc', t);
    const now = Date.now();
    const got = await Promise.all([turns.take('acc', now), turns.take('acc', now)].map(outcome));
    expect(got).toEqual(['turn', 'turn']);
  });
});
