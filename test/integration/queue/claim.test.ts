// The claimer alone, on a real database: accounts take turns on a model limited to one render at a
// time (where every account is at zero running renders whenever the slot frees), and the limit holds
// against two claimers until a lease lapses.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../../src/db/pool.ts';
import { Claimer } from '../../../src/queue/claim.ts';
import { freshDatabase } from '../../helpers/db.ts';

let db: Db;
let drop: () => Promise<void>;

beforeAll(async () => {
  ({ db, drop } = await freshDatabase());
  await db.query(`INSERT INTO accounts (id, email) VALUES ('acct_a', 'a@example.test'), ('acct_b', 'b@example.test')`);
});
afterAll(async () => { await drop?.(); });

let seq = 0;
async function enqueue(account: string, model: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `gen_${String(++seq).padStart(6, '0')}`;
    await db.query(`INSERT INTO generations (id, account_id, model_id, inputs, cost_cents, deadline_at, created_at, run_after)
                    VALUES ($1, $2, $3, '{}', 0, now() + interval '1 hour', now() - make_interval(secs => 1000 - $4), now() - make_interval(secs => 1000 - $4))`,
    [id, account, model, seq]);
    ids.push(id);
  }
  return ids;
}

const finish = (id: string) => db.query(
  `UPDATE generations SET status = 'succeeded', text_output = 'ok', completed_at = clock_timestamp(), lease_owner = NULL, lease_until = NULL WHERE id = $1`, [id]);

it('takes turns between accounts on a model limited to one render, instead of draining the flood first', async () => {
  const a = await enqueue('acct_a', 'm/one', 6);
  const b = await enqueue('acct_b', 'm/one', 2); // queued after all of A's
  const claimer = new Claimer(db, new Map([['m/one', 1]]), 'w1', 15);
  const order: string[] = [];
  for (let job = await claimer.next(); job; job = await claimer.next()) {
    order.push(job.id);
    await finish(job.id);
  }
  expect(order).toEqual([a[0], b[0], a[1], b[1], a[2], a[3], a[4], a[5]]);
});

it('holds a model limit against two claimers until the running render\'s lease lapses', async () => {
  const [x, y] = await enqueue('acct_a', 'm/limited', 2);
  const one = new Claimer(db, new Map([['m/limited', 1]]), 'w1', 15);
  const two = new Claimer(db, new Map([['m/limited', 1]]), 'w2', 15);
  const [first, second] = await Promise.all([one.next(), two.next()]);
  expect([first?.id, second?.id].filter(Boolean)).toEqual([x]);
  expect(await two.next()).toBeNull();
  // the worker holding x died: once its lease lapses, x (oldest) is claimed again, and only x
  await db.query(`UPDATE generations SET lease_until = now() - interval '1 second' WHERE id = $1`, [x]);
  const again = await two.next();
  expect(again).toMatchObject({ id: x, attempts: 2 });
  expect(await one.next()).toBeNull();
  await finish(x);
  expect((await one.next())?.id).toBe(y);
});
