// Migration 037 numbers the credits and reversals made before it (docs/billing.md "Receipts"), in
// the order they were made, each series and year from 1, without the shortfall bookkeeping; the
// counters go on from there, so the first credit after the upgrade takes the next number.
import { describe, expect, it } from 'vitest';
import { migrate, migrationFiles } from '../../src/db/migrate.ts';
import { createPool } from '../../src/db/pool.ts';
import { emptyDatabase } from '../helpers/db.ts';

describe('migration 037', () => {
  it('numbers the earlier credits and reversals in order, then the next credit', async () => {
    const empty = await emptyDatabase();
    const db = createPool(empty.url, 2, { long: true });
    try {
      const before = new Set(migrationFiles().filter((m) => m < '037'));
      await migrate(db, undefined, before, []);
      await db.query(`INSERT INTO accounts (id, email) VALUES ('acct_a', 'a@example.test')`);
      const entries = [
        ['led_1', 'credit', 500, 'first', '2025-12-31T23:00:00Z'],
        ['led_2', 'reversal', 200, 'Stripe refund of Checkout cs_1', '2026-01-02T00:00:00Z'],
        ['led_3', 'reversal', 50, 'Shortfall made good from led_4', '2026-01-03T00:00:00Z'],
        ['led_4', 'credit', 700, null, '2026-01-03T00:00:00Z'],
        ['led_5', 'credit', 300, 'later', '2026-02-01T00:00:00Z'],
      ];
      for (const [id, kind, amount, reason, at] of entries)
        await db.query(
          `INSERT INTO ledger_entries (id, account_id, kind, amount_cents, reason, created_at)
           VALUES ($1, 'acct_a', $2, $3, $4, $5)`,
          [id, kind, amount, reason, at],
        );
      await migrate(db);
      const { rows } = await db.query(
        'SELECT entry_id, number FROM receipts ORDER BY series, year, seq',
      );
      expect(rows).toEqual([
        { entry_id: 'led_2', number: 'CN-2026-000001' },
        { entry_id: 'led_1', number: 'R-2025-000001' },
        { entry_id: 'led_4', number: 'R-2026-000001' },
        { entry_id: 'led_5', number: 'R-2026-000002' },
      ]);
      await db.query(
        `INSERT INTO ledger_entries (id, account_id, kind, amount_cents, created_at)
         VALUES ('led_6', 'acct_a', 'credit', 100, '2026-03-01T00:00:00Z')`,
      );
      const next = await db.query(`SELECT number FROM receipts WHERE entry_id = 'led_6'`);
      expect(next.rows).toEqual([{ number: 'R-2026-000003' }]);
    } finally {
      await db.end();
      await empty.drop();
    }
  });
});
