// The webhook claim's cost does not grow with another account's backlog (docs/api.md "Abuse limits"):
// with an account at its in-flight cap and thousands of due deliveries on its nine endpoints, a claim
// reads a few rows of the outbox, not that backlog, and takes the other account's delivery. Rows read
// are counted by PostgreSQL itself (pg_stat_xact_user_tables: the claim's own transaction), on a
// database whose statistics were never gathered, as a fresh outbox's are not, then once they are.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { claimDeliveries } from '../../../src/db/webhook-deliveries.ts';
import { PER_ACCOUNT_IN_FLIGHT, PER_ENDPOINT_IN_FLIGHT } from '../../../src/webhooks/dispatcher.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  dbh = await freshDatabase();
});
afterAll(async () => {
  await dbh?.drop();
});

const BACKLOG_PER_ENDPOINT = 500;

/** One claim in a transaction rolled back: what it took, and the outbox rows it read. */
async function claimOnce(planMode: 'auto' | 'force_custom_plan' | 'force_generic_plan' = 'auto') {
  const c = await dbh.db.connect();
  try {
    await c.query('BEGIN');
    await c.query(`SET LOCAL plan_cache_mode = ${planMode}`);
    const taken = await claimDeliveries(c, {
      owner: 'test',
      max: 64,
      leaseSeconds: 30,
      perEndpoint: PER_ENDPOINT_IN_FLIGHT,
      perAccount: PER_ACCOUNT_IN_FLIGHT,
    });
    const { rows } = await c.query<{ read: string }>(
      `SELECT (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text AS read
       FROM pg_stat_xact_user_tables WHERE relname = 'webhook_deliveries'`,
    );
    await c.query('ROLLBACK');
    return { taken: taken.map((t) => t.id), read: Number(rows[0].read) };
  } finally {
    c.release();
  }
}

describe('the webhook claim', () => {
  it("reads a few rows, not another account's backlog, and takes the other account's delivery", async () => {
    const q = (sql: string, values: unknown[] = []) => dbh.db.query(sql, values);
    await q(
      `INSERT INTO accounts (id, email) VALUES ('acc_hostile', 'h@claim.test'), ('acc_good', 'g@claim.test')`,
    );
    await q(`INSERT INTO webhook_endpoints (id, account_id, url, events, secret)
             SELECT 'we_h' || i, 'acc_hostile', 'http://192.0.2.1/' || i, '{generation.succeeded}'::text[], 's'
             FROM generate_series(1, 9) i
             UNION ALL SELECT 'we_good', 'acc_good', 'http://192.0.2.2/', '{generation.succeeded}'::text[], 's'`);
    // The good account's delivered history, and one delivery due now.
    await q(`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, type, generation_id, snapshot, status, next_attempt_at)
             SELECT 'wd_old' || g, 'ev_old' || g, 'we_good', 'generation.succeeded', 'gen_old' || g, '{}', 'delivered', NULL
             FROM generate_series(1, 200) g`);
    await q(`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, type, generation_id, snapshot)
             VALUES ('wd_good', 'ev_good', 'we_good', 'generation.succeeded', 'gen_good', '{}')`);
    const before = await claimOnce();
    expect(before.taken).toEqual(['wd_good']);

    // The hostile account: a backlog due on each of its nine endpoints, its cap in flight.
    await q(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, type, generation_id, snapshot, next_attempt_at)
       SELECT 'wd_h' || e || '_' || g, 'ev_h' || g, 'we_h' || e, 'generation.succeeded', 'gen_h' || g, '{}',
              now() - interval '10 minutes' + g * interval '1 ms'
       FROM generate_series(1, 9) e, generate_series(1, $1::int) g`,
      [BACKLOG_PER_ENDPOINT],
    );
    await q(`UPDATE webhook_deliveries SET lease_owner = 'elsewhere', lease_until = now() + interval '30 s'
             WHERE id IN ('wd_h1_1', 'wd_h1_2', 'wd_h2_1', 'wd_h2_2')`);
    expect(PER_ACCOUNT_IN_FLIGHT).toBe(4);

    const after = await claimOnce();
    expect(after.taken).toEqual(['wd_good']);
    // A claim that read the backlog would read thousands of rows more (9 × 500 are pending). What it
    // reads beside that does not depend on the backlog: a few rows on PostgreSQL 18; on 15, with no
    // statistics, the planner also reads the good endpoint's own 200 delivered rows.
    expect(after.read - before.read).toBeLessThan(50);
    expect(after.read).toBeLessThan(500);

    // Once statistics are gathered, as autovacuum gathers them within a minute of a busy outbox: a
    // backlog made as renders make it, in due order, so the heap's order follows the due time. The
    // statistics then say the good endpoint holds a tenth of the pending rows and that walking them
    // in due order reads the heap in sequence: an index of every endpoint's due deliveries would look
    // cheaper than the endpoint's own, and its walk would read the whole backlog before the good
    // delivery, due after it (9,021 rows with migration 009's webhook_deliveries_due). Both the plan
    // made for these values and the generic plan a prepared claim settles on are tried.
    await q(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, type, generation_id, snapshot, next_attempt_at)
       SELECT 'wd_t' || e || '_' || g, 'ev_t' || g, 'we_h' || e, 'generation.succeeded', 'gen_t' || g, '{}',
              now() - interval '5 minutes' + g * interval '10 ms'
       FROM generate_series(1, $1::int) g, generate_series(1, 9) e ORDER BY g, e`,
      [BACKLOG_PER_ENDPOINT],
    );
    await q('ANALYZE webhook_deliveries');
    await q('ANALYZE webhook_endpoints');
    for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
      const analysed = await claimOnce(mode);
      expect({ mode, taken: analysed.taken }).toEqual({ mode, taken: ['wd_good'] });
      expect({ mode, read: analysed.read < 500 }).toEqual({ mode, read: true });
    }
  });
});
