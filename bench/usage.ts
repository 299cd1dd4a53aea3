// The studio's Usage page over a year: an account with a render of each of 20 models on every day
// of the last 366 (7,320 renders, seeded as SQL through our pool module, as a year of use would
// leave them), its page asked for the whole year: the chart of spend per day stacked by model, its
// table, the spend per key and model, the ledger. Target: p99 ≤ 50 ms at 16 connections, beside
// the bare node:http server answering the same HTML and the framework floor.
import type { BenchContext } from './lib/context.ts';
import { compareHttp, comparedRow, floorRow } from './lib/compare.ts';
import type { Result } from './lib/report.ts';
import { startRendergate } from './lib/service.ts';
import { accountOfCookie, signUp } from './studio.ts';
import { createPool, transaction } from '../src/db/pool.ts';

const P99_TARGET_MS = 50;
const MODELS = 20;
const DAYS = 366;

/**
 * A render of each model on each of the last DAYS days, priced 1 to 20 cents by model, each with
 * its charge in the ledger, after a credit that paid for them all.
 */
async function seedYear(databaseUrl: string, accountId: string): Promise<void> {
  const db = createPool(databaseUrl, 1);
  try {
    await transaction(db, async (tx) => {
      await tx.query(
        `INSERT INTO generations (id, account_id, model_id, inputs, status, cost_cents,
                                  text_output, created_at, completed_at, deadline_at)
         SELECT 'gen_' || md5(d::text || '/' || m), $1, 'bench/model-' || lpad(m::text, 2, '0'),
                '{}', 'succeeded', m, 'x', now() - d * interval '1 day', now(), now()
           FROM generate_series(0, $2 - 1) d, generate_series(1, $3) m`,
        [accountId, DAYS, MODELS],
      );
      await tx.query(
        `INSERT INTO ledger_entries (id, account_id, kind, amount_cents, generation_id, created_at)
         SELECT 'led_' || md5(g.id), g.account_id, 'charge', g.cost_cents, g.id, g.created_at
           FROM generations g WHERE g.account_id = $1`,
        [accountId],
      );
      await tx.query(
        `INSERT INTO ledger_entries (id, account_id, kind, amount_cents, reason, created_at)
         VALUES ('led_' || md5('credit'), $1, 'credit', 100000, 'a year of renders',
                 now() - $2 * interval '1 day')`,
        [accountId, DAYS],
      );
      // the balance the credit less the charges leaves (76,860 cents spent of 100,000)
      await tx.query(
        `UPDATE accounts SET balance_cents = 100000 -
           (SELECT sum(amount_cents) FROM ledger_entries WHERE account_id = $1 AND kind = 'charge')
          WHERE id = $1`,
        [accountId],
      );
    });
    await db.query('VACUUM ANALYZE generations, ledger_entries');
  } finally {
    await db.end();
  }
}

export async function run(ctx: BenchContext): Promise<Result[]> {
  const url = await ctx.pg.createDatabase('bench_usage');
  const svc = await startRendergate(ctx, url, { role: 'api' });
  try {
    const cookie = await signUp(svc.base);
    const accountId = await accountOfCookie(svc.base, cookie);
    await seedYear(url, accountId);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const path = `/usage?from=${day(Date.now() - (DAYS - 1) * 86_400_000)}&to=${day(Date.now())}`;
    const sample = await fetch(svc.base + path, { headers: { cookie } });
    const body = await sample.text();
    if (sample.status !== 200) throw new Error(`${path} -> ${sample.status}`);
    if (!body.includes('role="img"')) throw new Error(`${path}: no chart`);
    const runs = await compareHttp(ctx, {
      name: 'studio usage (a year, 20 models)',
      concurrencies: [16],
      request: { method: 'GET', headers: { cookie } },
      rg: svc,
      path,
      body,
      floorAt: 16,
    });
    return runs.flatMap((x) =>
      [
        comparedRow(
          'usage',
          `GET /usage, 366 days × ${MODELS} models (${Math.round(Buffer.byteLength(body) / 1024)} KiB HTML)`,
          'bare http',
          x,
          'p99 ≤ 50 ms',
          (_ratio, r) => r.rg.p99 !== null && r.rg.p99 <= P99_TARGET_MS,
        ),
        floorRow('usage', x),
      ].filter((r) => r !== null),
    );
  } finally {
    await svc.stop();
    await ctx.pg.dropDatabase('bench_usage');
  }
}
