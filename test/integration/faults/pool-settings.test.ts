// The settings each kind of pool gives its sessions (src/db/pool.ts): every statement a request runs is
// bounded; the dispatcher's and the worker's claims commit without waiting for the WAL flush, and the
// dispatcher's statements are planned once per connection (generic plans), never those of other pools.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPool, DB_WAIT } from '../../../src/db/pool.ts';
import { emptyDatabase } from '../../helpers/db.ts';

let dbh: Awaited<ReturnType<typeof emptyDatabase>>;
beforeAll(async () => {
  dbh = await emptyDatabase();
});
afterAll(async () => {
  await dbh?.drop();
});

async function settingsOf(opts: Parameters<typeof createPool>[2]) {
  const pool = createPool(dbh.url, 2, opts);
  try {
    // Both connections of the pool, each from its start: the settings are the session's, not a query's.
    const read = () =>
      pool.query<{ timeout: string; commit: string; plans: string }>(
        `SELECT current_setting('statement_timeout') AS timeout,
                current_setting('synchronous_commit') AS commit,
                current_setting('plan_cache_mode') AS plans
         FROM pg_sleep(0.05)`,
      );
    const [a, b] = await Promise.all([read(), read()]);
    expect(a.rows[0]).toEqual(b.rows[0]);
    return a.rows[0];
  } finally {
    await pool.end();
  }
}

it('a request pool: statements bounded, durable commits, plans as PostgreSQL chooses', async () => {
  expect(await settingsOf({})).toEqual({
    timeout: `${DB_WAIT.queryMs}ms`,
    commit: 'on',
    plans: 'auto',
  });
});

it("the dispatcher's pool: asynchronous commits and generic plans, still bounded", async () => {
  expect(await settingsOf({ asyncCommit: true, genericPlans: true })).toEqual({
    timeout: `${DB_WAIT.queryMs}ms`,
    commit: 'off',
    plans: 'force_generic_plan',
  });
});

it('a long pool (migrations, operator commands): no statement bound', async () => {
  expect((await settingsOf({ long: true })).timeout).toBe('0');
});
