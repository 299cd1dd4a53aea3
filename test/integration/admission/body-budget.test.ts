// BodyBudget (src/admission/body-budget.ts) on the real database: an account's request bodies over
// 16 KiB count against its bytes a second, after a burst; a body goes when its account is not
// behind, and those after a large one wait (429 with the seconds until the account is clear). One
// process decides exactly as the schedule does; the budget is the account's on every process
// (two-processes .test.ts).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BodyBudget, FREE_BYTES } from '../../../src/admission/body-budget.ts';
import type { Db } from '../../../src/db/pool.ts';
import { counting } from '../../helpers/counting-db.ts';
import { freshDatabase } from '../../helpers/db.ts';

let db: Db;
let drop: () => Promise<void>;
beforeAll(async () => ({ db, drop } = await freshDatabase()));
afterAll(async () => drop());

const MiB = 1024 * 1024;
type Taken = Awaited<ReturnType<BodyBudget['take']>>;
const retry = (e: Taken) => e && [e.code, e.headers?.['retry-after']];

it('lets small bodies by, a burst of large ones at once, then refuses until clear', async () => {
  expect(FREE_BYTES).toBe(16 * 1024);
  const b = new BodyBudget(db, 1 * MiB, 4 * MiB);
  const t = 1_000_000;
  // never a statement, never a promise
  for (let i = 0; i < 10_000; i++) expect(b.take('acc', FREE_BYTES, t)).toBeUndefined();
  // 4 MiB of burst: four bodies of 1 MiB are paid for, a fifth goes and is owed (1 s)
  for (let i = 0; i < 5; i++) expect(await b.take('acc', MiB, t)).toBeUndefined();
  const refused = await b.take('acc', MiB, t);
  expect(retry(refused)).toEqual(['RATE_LIMITED', '1']);
  expect(refused!.message).toBe(
    "This account's request bodies come faster than 1 MiB a second; retry after 1 s.",
  );
  // small ones still go; another account has its own budget
  expect(b.take('acc', 1000, t)).toBeUndefined();
  expect(await b.take('other', MiB, t)).toBeUndefined();
  // clear a second later: one more goes, and the next waits again
  expect(await b.take('acc', MiB, t + 1000)).toBeUndefined();
  expect(retry(await b.take('acc', MiB, t + 1000))).toEqual(['RATE_LIMITED', '1']);
});

it('never refuses a body for its size alone, only the ones behind it', async () => {
  const b = new BodyBudget(db, 1 * MiB, 4 * MiB);
  const t = 1_000_000;
  expect(await b.take('acc-large', 20 * MiB, t)).toBeUndefined();
  // 20 MiB less the 4 of the burst: clear 16 s on
  expect(retry(await b.take('acc-large', MiB, t))).toEqual(['RATE_LIMITED', '16']);
  // remembered: refused again without a statement until then
  const early = b.take('acc-large', MiB, t + 15_500);
  expect(early).not.toBeInstanceOf(Promise);
  expect(retry(early as Taken)).toEqual(['RATE_LIMITED', '1']);
  expect(await b.take('acc-large', MiB, t + 16_000)).toBeUndefined();
});

it('remembers at most so many accounts; one forgotten is asked again, never let in', async () => {
  const b = new BodyBudget(db, 1 * MiB, 1 * MiB, 2);
  const t = 1_000_000;
  await b.take('a', 8 * MiB, t);
  await b.take('b', 8 * MiB, t);
  await b.take('c', 8 * MiB, t); // 'a' is forgotten here: the database still has its schedule
  const forgotten = b.take('a', MiB, t);
  expect(forgotten).toBeInstanceOf(Promise);
  expect(retry(await forgotten)).toEqual(['RATE_LIMITED', '7']);
  expect(retry(await b.take('c', MiB, t))).toEqual(['RATE_LIMITED', '7']);
});

it('decides parallel bodies of one account in order, most from leases in memory', async () => {
  const counted = counting(db);
  const b = new BodyBudget(counted.db, 1 * MiB, 4 * MiB);
  const t = 2_000_000;
  // bodies of a quarter MiB: four MiB of burst pays for sixteen, a seventeenth goes and is owed,
  // the eighteenth is refused
  const got = await Promise.all(
    Array.from({ length: 18 }, async () => b.take('acc-par', MiB / 4, t)),
  );
  expect(got.slice(0, 17)).toEqual(Array(17).fill(undefined));
  expect(retry(got[17])).toEqual(['RATE_LIMITED', '1']);
  // leases of 1, 2 and 4 bodies (a quarter of the burst at most) while capacity is free: bodies 1,
  // 3, 6, 11 and 16 asked the database, then 17, owed; 18 is refused from the end 17 saw: 6
  // statements for 18 bodies
  expect(counted.queries()).toBe(6);
  const { rows } = await db.query(
    `SELECT clear_at FROM admission_paces WHERE pace = 'bodies' AND subject = 'acc-par'`,
  );
  expect(rows[0].clear_at).toBe(t + 250);
});
