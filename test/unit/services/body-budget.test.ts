// BodyBudget (src/services/body-budget.ts): an account's request bodies over 16 KiB count against its
// bytes a second, after a burst; a body goes when its account is not behind, and those after a large
// one wait (429 with the seconds until the account is clear).
import { expect, it } from 'vitest';
import { BodyBudget, FREE_BYTES } from '../../../src/services/body-budget.ts';

const MiB = 1024 * 1024;
const retry = (e: ReturnType<BodyBudget['take']>) => e && [e.code, e.headers?.['retry-after']];

it('lets small bodies by uncounted, a burst of large ones at once, then refuses until the account is clear', () => {
  expect(FREE_BYTES).toBe(16 * 1024);
  const b = new BodyBudget(1 * MiB, 4 * MiB);
  const t = 1_000_000;
  for (let i = 0; i < 10_000; i++) expect(b.take('acc', FREE_BYTES, t)).toBeUndefined();
  // 4 MiB of burst: four bodies of 1 MiB are paid for, a fifth goes and is owed (1 s)
  for (let i = 0; i < 5; i++) expect(b.take('acc', MiB, t)).toBeUndefined();
  const refused = b.take('acc', MiB, t);
  expect(retry(refused)).toEqual(['RATE_LIMITED', '1']);
  expect(refused!.message).toBe(
    "This account's request bodies come faster than 1 MiB a second; retry after 1 s.",
  );
  // small ones still go; another account has its own budget
  expect(b.take('acc', 1000, t)).toBeUndefined();
  expect(b.take('other', MiB, t)).toBeUndefined();
  // clear a second later: one more goes, and the next waits again
  expect(b.take('acc', MiB, t + 1000)).toBeUndefined();
  expect(retry(b.take('acc', MiB, t + 1000))).toEqual(['RATE_LIMITED', '1']);
});

it('never refuses a body for its size alone, only the ones behind it', () => {
  const b = new BodyBudget(1 * MiB, 4 * MiB);
  const t = 1_000_000;
  expect(b.take('acc', 20 * MiB, t)).toBeUndefined();
  // 20 MiB less the 4 of the burst: clear 16 s on
  expect(retry(b.take('acc', MiB, t))).toEqual(['RATE_LIMITED', '16']);
  expect(retry(b.take('acc', MiB, t + 15_500))).toEqual(['RATE_LIMITED', '1']);
  expect(b.take('acc', MiB, t + 16_000)).toBeUndefined();
});

it('remembers at most so many accounts, the least recently seen going first', () => {
  const b = new BodyBudget(1 * MiB, 1 * MiB, 2);
  const t = 1_000_000;
  b.take('a', 8 * MiB, t);
  b.take('b', 8 * MiB, t);
  b.take('c', 8 * MiB, t); // 'a' is forgotten, and starts again with its burst
  expect(b.take('a', MiB, t)).toBeUndefined();
  expect(retry(b.take('c', MiB, t))).toEqual(['RATE_LIMITED', '7']);
});
