// RefusalPace (src/admission/refusal-pace.ts): a scope's first refusals at once, then each one
// late; refilled over time; bounded in answers held and scopes remembered.
import { describe, expect, it } from 'vitest';
import { PACE_DELAY_MS, RefusalPace } from '../../../src/admission/refusal-pace.ts';
import { waitFor } from '../../helpers/wait.ts';

describe('RefusalPace', () => {
  it('answers a burst at once, then holds each refusal, and refills at its rate', () => {
    const pace = new RefusalPace({ burst: 5, perSecond: 2 });
    const t = 1_000_000;
    const first = Array.from({ length: 5 }, () => pace.delay('key:a', t));
    expect(first).toEqual([0, 0, 0, 0, 0]);
    expect(pace.delay('key:a', t)).toBe(PACE_DELAY_MS);
    expect(pace.delay('key:a', t + 100)).toBe(PACE_DELAY_MS);
    // another scope keeps its own burst
    expect(pace.delay('key:b', t + 100)).toBe(0);
    // half a second later one refusal's worth has come back, and it is spent
    expect(pace.delay('key:a', t + 600)).toBe(0);
    expect(pace.delay('key:a', t + 600)).toBe(PACE_DELAY_MS);
    // a client that stopped is answered at once again, its whole burst
    const later = Array.from({ length: 5 }, () => pace.delay('key:a', t + 60_000));
    expect(later).toEqual([0, 0, 0, 0, 0]);
  });

  it('answers at once while the most answers it may hold are held, and releases them', async () => {
    const pace = new RefusalPace({ burst: 1, perSecond: 0.001, delayMs: 50, maxHeld: 2 });
    const order: string[] = [];
    pace.later('s', () => order.push('burst'));
    pace.later('s', () => order.push('held 1'));
    pace.later('s', () => order.push('held 2'));
    pace.later('s', () => order.push('at once'));
    expect(order).toEqual(['burst', 'at once']);
    expect(pace.held).toBe(2);
    await waitFor('the held answers released', () => pace.held === 0);
    expect(order).toEqual(['burst', 'at once', 'held 1', 'held 2']);
    expect(pace.held).toBe(0);
    expect(pace.pause('s')).toBeInstanceOf(Promise);
    expect(pace.held).toBe(1);
  });

  it('remembers at most its number of scopes, forgetting the least recently refused', () => {
    const pace = new RefusalPace({ burst: 1, perSecond: 0.001, maxScopes: 2 });
    const t = 5_000;
    expect(pace.delay('a', t)).toBe(0);
    expect(pace.delay('b', t)).toBe(0);
    expect(pace.delay('a', t)).toBe(PACE_DELAY_MS); // a is the most recent now
    expect(pace.delay('c', t)).toBe(0); // b goes
    expect(pace.delay('a', t)).toBe(PACE_DELAY_MS);
    expect(pace.delay('b', t)).toBe(0); // forgotten: starts again with its burst
  });
});
