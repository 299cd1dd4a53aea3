// Pure pieces of the second tranche: the Prefer: wait parser (RFC 7240: anything else is ignored), the
// held-request registry and its bound, and the new configuration variables.
import { describe, expect, it } from 'vitest';
import { preferWait, Waiters } from '../../src/admission/waiters.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('preferWait', () => {
  it('takes wait=1..60 among other preferences and ignores everything else', () => {
    expect(preferWait('wait=5')).toBe(5);
    expect(preferWait('respond-async, wait=60')).toBe(60);
    expect(preferWait('WAIT = "10"')).toBe(10);
    expect(preferWait(['return=minimal', 'wait=3'])).toBe(3);
    for (const v of [
      undefined,
      '',
      'wait',
      'wait=',
      'wait=0',
      'wait=61',
      'wait=-1',
      'wait=1.5',
      'wait=100',
      'waits=5',
      'return=minimal',
    ]) {
      expect([v, preferWait(v)]).toEqual([v, undefined]);
    }
  });
});

describe('Waiters', () => {
  it('wakes the waiters of one id, all on a reconnect, and refuses past its bound', () => {
    const w = new Waiters(3);
    const woken: string[] = [];
    const r1 = w.add('a', () => woken.push('a1'))!;
    w.add('a', () => woken.push('a2'));
    w.add('b', () => woken.push('b1'));
    expect(w.add('c', () => woken.push('c1'))).toBeNull();
    w.wake('a');
    expect(woken).toEqual(['a1', 'a2']);
    r1();
    r1(); // twice is harmless
    expect(w.size).toBe(2);
    w.wake(null);
    expect(woken).toEqual(['a1', 'a2', 'a2', 'b1']);
    expect(w.add('c', () => undefined)).not.toBeNull();
  });

  it('holds at most a tenth of its bound for one account; other accounts keep their room', () => {
    const w = new Waiters(30); // 3 an account
    const mine = [1, 2, 3].map((n) => w.add(`g${n}`, () => undefined, 'acct_a'));
    expect(mine.every((r) => r !== null)).toBe(true);
    expect(w.add('g4', () => undefined, 'acct_a')).toBeNull();
    expect(w.add('g1', () => undefined, 'acct_b')).not.toBeNull();
    mine[0]!();
    mine[0]!(); // twice is harmless: one place back, not two
    expect(w.add('g4', () => undefined, 'acct_a')).not.toBeNull();
    expect(w.add('g5', () => undefined, 'acct_a')).toBeNull();
    expect(w.size).toBe(4);
    expect(new Waiters(5).add('g', () => undefined, 'acct_a')).not.toBeNull(); // at least one
  });
});

describe('configuration', () => {
  it('reads retention durations, the upload limit and the retry schedule; reports every bad one', () => {
    const c = loadConfig({
      RENDERGATE_OUTPUT_RETENTION: '0',
      RENDERGATE_UPLOAD_RETENTION: '36h',
      RENDERGATE_WEBHOOK_RETRY_SECONDS: '1, 2,3',
    });
    expect([
      c.outputRetentionSeconds,
      c.uploadRetentionSeconds,
      c.webhookRetrySeconds,
      c.uploadLimitBytes,
    ]).toEqual([0, 36 * 3600, [1, 2, 3], 20 * 1024 * 1024]);
    expect(loadConfig({}).outputRetentionSeconds).toBe(30 * 86400);
    try {
      loadConfig({
        RENDERGATE_OUTPUT_RETENTION: '3w',
        RENDERGATE_UPLOAD_RETENTION: '0',
        RENDERGATE_WEBHOOK_RETRY_SECONDS: '5,x',
      });
      throw new Error('accepted');
    } catch (e) {
      expect((e as ConfigError).problems.map((p) => p.split('=')[0]).sort()).toEqual([
        'RENDERGATE_OUTPUT_RETENTION',
        'RENDERGATE_UPLOAD_RETENTION',
        'RENDERGATE_WEBHOOK_RETRY_SECONDS',
      ]);
    }
  });
});
