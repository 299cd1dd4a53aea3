// The studio's doors' budget per address (src/admission/door-budget.ts): a bucket per
// address, refilled over the minute; refusals take nothing; an IPv6 /64 is one address.
import { expect, it } from 'vitest';
import { DoorBudget } from '../../../src/admission/door-budget.ts';

it('lets `perMinute` in at once, then one per 60/perMinute s, per address', () => {
  const b = new DoorBudget(6);
  const t = 1_000_000;
  for (let i = 0; i < 6; i++) expect(b.take('127.0.0.2', t)).toBe(0);
  expect(b.take('127.0.0.2', t)).toBe(10); // one more in 10 s
  expect(b.take('127.0.0.3', t)).toBe(0); // another address has its own
  // a flood of refusals takes nothing: the next one is let in on time
  for (let i = 0; i < 100; i++) expect(b.take('127.0.0.2', t + 5_000)).toBeGreaterThan(0);
  expect(b.take('127.0.0.2', t + 10_000)).toBe(0);
  expect(b.take('127.0.0.2', t + 10_000)).toBe(10);
  // a full minute later the bucket is full again, not fuller
  for (let i = 0; i < 6; i++) expect(b.take('127.0.0.2', t + 600_000)).toBe(0);
  expect(b.take('127.0.0.2', t + 600_000)).toBeGreaterThan(0);
});

it('counts an IPv6 /64 as one address, holds at most `max`, and 0 is no limit', () => {
  const b = new DoorBudget(1, 2);
  expect(b.take('2001:db8:1:2::1', 0)).toBe(0);
  expect(b.take('2001:db8:1:2::ffff', 0)).toBe(60);
  expect(b.take('10.0.0.1', 0)).toBe(0);
  expect(b.take('10.0.0.2', 0)).toBe(0); // the least recently seen (the /64) is forgotten…
  expect(b.take('2001:db8:1:2::1', 0)).toBe(0); // …and starts again full
  const off = new DoorBudget(0);
  for (let i = 0; i < 1000; i++) expect(off.take('127.0.0.2', 0)).toBe(0);
});
