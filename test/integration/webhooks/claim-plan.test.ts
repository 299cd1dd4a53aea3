// The dispatcher's claim (src/db/webhook-deliveries.ts) costs every account the same beside another
// account's backlog: with thousands of one account's deliveries waiting behind its in-flight cap,
// PostgreSQL reuses the statement's cached plan instead of planning it again on every claim (which, with
// the caps sent as parameters, it did: a millisecond and more of planning per claim, and the dispatcher
// claims one batch at a time for every account). And the claim still takes only the other account's
// deliveries, within the per-endpoint cap.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../../src/db/pool.ts';
import { claimDeliveries, claimStatement } from '../../../src/db/webhook-deliveries.ts';
import { freshDatabase } from '../../helpers/db.ts';

let db: Db;
let drop: () => Promise<void>;
beforeAll(async () => {
  ({ db, drop } = await freshDatabase());
  await db.query(`INSERT INTO accounts (id, email, name) VALUES
    ('acct_hostile', 'hostile@example.com', 'h'), ('acct_good', 'good@example.com', 'g')`);
  await db.query(`INSERT INTO webhook_endpoints (id, account_id, url, events, secret)
    SELECT 'we_h' || i, 'acct_hostile', 'http://127.0.0.1:9/' || i, ARRAY['generation.succeeded'], 's'
    FROM generate_series(1, 9) i`);
  await db.query(`INSERT INTO webhook_endpoints (id, account_id, url, events, secret)
    VALUES ('we_good', 'acct_good', 'http://127.0.0.1:9/good', ARRAY['generation.succeeded'], 's')`);
  // the hostile account's backlog: 3,000 due deliveries, four of them in flight (its cap)
  await db.query(`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, type, generation_id, snapshot,
      next_attempt_at)
    SELECT 'msg_h' || i, 'evt_h' || i, 'we_h' || (1 + i % 9), 'generation.succeeded', 'gen_h' || i, '{}',
      clock_timestamp() - interval '1 minute'
    FROM generate_series(1, 3000) i`);
  await db.query(`UPDATE webhook_deliveries SET lease_owner = 'another', lease_until = now() + interval '1 hour'
    WHERE id IN ('msg_h1', 'msg_h2', 'msg_h3', 'msg_h4')`);
  await db.query('ANALYZE webhook_deliveries');
  await db.query('ANALYZE webhook_endpoints');
});
afterAll(async () => {
  await drop?.();
});

it('reuses its cached plan beside a backlog, and takes only the other account within its caps', async () => {
  const client = await db.connect();
  try {
    for (let i = 0; i < 12; i++) {
      await client.query(
        `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, type, generation_id,
          snapshot) VALUES ($1, $1, 'we_good', 'generation.succeeded', $1, '{}'),
          ($1 || 'b', $1 || 'b', 'we_good', 'generation.succeeded', $1 || 'b', '{}'),
          ($1 || 'c', $1 || 'c', 'we_good', 'generation.succeeded', $1 || 'c', '{}')`,
        [`g${i}`],
      );
      const rows = await claimDeliveries(client, {
        owner: 'me',
        max: 64,
        leaseSeconds: 30,
        perEndpoint: 2,
        perAccount: 4,
      });
      expect(rows.map((r) => r.endpoint_id)).toEqual(['we_good', 'we_good']);
      await client.query(`UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL,
          lease_owner = NULL, lease_until = NULL WHERE endpoint_id = 'we_good'`);
    }
    // PostgreSQL plans a prepared statement afresh for its first five runs, then uses the cached
    // (generic) plan unless it estimates it costlier than the fresh ones were
    const { rows } = await client.query<{ generic_plans: string; custom_plans: string }>(
      'SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1',
      [claimStatement(2, 4).name],
    );
    expect(rows).toHaveLength(1);
    expect(Number(rows[0].custom_plans)).toBeLessThanOrEqual(6);
    expect(Number(rows[0].generic_plans)).toBeGreaterThanOrEqual(6);
  } finally {
    client.release();
  }
});

it('refuses caps that are not small positive integers', () => {
  expect(() => claimStatement(0, 4)).toThrow(/bad webhook cap/);
  expect(() => claimStatement(2, 1.5)).toThrow(/bad webhook cap/);
  expect(claimStatement(2, 4).text).not.toMatch(/PER_(ENDPOINT|ACCOUNT)|\$4|\$5/);
});
