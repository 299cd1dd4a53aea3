// BoundedMap and HeldCounts (src/admission/bounded-map.ts): admission's per-key state in memory
// never holds more than its bound; stale entries go first, then the least recently set; counts of
// what is held go at 0 and are never evicted.
import { expect, it } from 'vitest';
import { BoundedMap, HeldCounts } from '../../../src/admission/bounded-map.ts';

it('holds at most `max` keys, the least recently set going first; reads do not reorder', () => {
  const m = new BoundedMap<string, number>(2);
  m.set('a', 1);
  m.set('b', 2);
  expect(m.get('a')).toBe(1); // read, not set: a stays the least recent
  m.set('c', 3);
  expect([m.has('a'), m.get('b'), m.get('c')]).toEqual([false, 2, 3]);
  m.set('b', 4); // set again: b is the most recent now
  m.set('d', 5);
  expect([m.has('c'), m.get('b'), m.get('d'), m.size]).toEqual([false, 4, 5, 2]);
});

it('drops stale entries before recent ones, never the key just set', () => {
  const m = new BoundedMap<string, number>(3, (v, now) => v <= now);
  m.set('old', 100, 0);
  m.set('ends', 50, 0);
  m.set('keeps', 500, 0);
  m.set('new', 10, 200); // 'ends' and 'old' have ended by 200; 'new' has too, but was just set
  expect([...m.values()].sort((x, y) => x - y)).toEqual([10, 500]);
});

it('evicts a sixteenth below its bound at once, so a flood of keys sweeps rarely', () => {
  let swept = 0;
  const m = new BoundedMap<number, number>(1600, () => {
    swept++;
    return false;
  });
  for (let i = 0; i < 16_000; i++) m.set(i, i, 0);
  expect(m.size).toBeLessThanOrEqual(1600);
  expect(m.size).toBeGreaterThanOrEqual(1500);
  // one sweep of ~1,600 entries per 100 new keys, not one per key
  expect(swept).toBeLessThan(16_000 * 20);
});

it('counts what is held per key, forgetting a key at 0', () => {
  const h = new HeldCounts<string>();
  h.add('a');
  h.add('a');
  expect(h.of('a')).toBe(2);
  h.release('a');
  h.release('a');
  h.release('a');
  expect([h.of('a'), h.of('b')]).toEqual([0, 0]);
});
