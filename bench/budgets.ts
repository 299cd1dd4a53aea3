// Budgets: create throughput with three budgets in force on every create (the account's, its
// member's and its key's, each counted in the charge's transaction: src/ledger/sql/
// create_generations.sql) beside the same creates without any, side by side on one service and
// database: 64 accounts each, 16 connections, two runs each in the order none, three, three, none
// so that a drift in throughput falls on both. Target: with budgets ≥ 0.90× without. Role `api`:
// no worker.
import crypto from 'node:crypto';
import pg from 'pg';
import type { BenchContext } from './lib/context.ts';
import { load, loadProblem, type LoadResult } from './lib/load.ts';
import type { Result } from './lib/report.ts';
import {
  admin,
  IMAGE_TO_VIDEO,
  makeAccount,
  nextIdempotencyKey,
  startRendergate,
} from './lib/service.ts';
import { round } from './lib/stats.ts';
import { cpuPerRequest, withCpu } from './lib/compare.ts';

const ACCOUNTS = 64;
const CONNECTIONS = 16;
/** Far above what a run spends: a budget in force that never refuses. */
const LIMIT = 1_000_000_000_000;

export async function run(ctx: BenchContext): Promise<Result[]> {
  const url = await ctx.pg.createDatabase('bench_budgets');
  const svc = await startRendergate(ctx, url, { role: 'api' });
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    // eight at a time: 128 at once timed out the pool's connects on a busy machine (a 503 here)
    const accounts = async () => {
      const made: Awaited<ReturnType<typeof makeAccount>>[] = [];
      while (made.length < ACCOUNTS)
        made.push(...(await Promise.all(Array.from({ length: 8 }, () => makeAccount(svc.base)))));
      return made;
    };
    const plain = await accounts();
    const budgeted = await accounts();
    for (const a of budgeted) {
      // a member who created the key: their budget counts its renders
      const person = `usr_${crypto.randomUUID().replaceAll('-', '')}`;
      await db.query('INSERT INTO people (id, email) VALUES ($1, $2)', [
        person,
        `${person}@bench.test`,
      ]);
      await db.query(
        "INSERT INTO memberships (account_id, person_id, role) VALUES ($1, $2, 'developer')",
        [a.accountId, person],
      );
      await db.query('UPDATE api_keys SET created_by = $2 WHERE id = $1', [a.keyId, person]);
      const put = (p: string) => admin(svc.base, 'PUT', p, { limitCents: LIMIT });
      await put(`/accounts/${a.accountId}/budgets/month`);
      await put(`/accounts/${a.accountId}/members/${person}/budgets/week`);
      await put(`/keys/${a.keyId}/budgets/day`);
    }
    const body = JSON.stringify(IMAGE_TO_VIDEO);
    let turn = 0;
    const creates = (keys: string[], durationS: number) =>
      load({
        url: svc.base + '/v1/generations',
        connections: CONNECTIONS,
        durationS,
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
        perRequestHeaders: () => ({
          authorization: `Bearer ${keys[turn++ % keys.length]}`,
          'idempotency-key': nextIdempotencyKey(),
        }),
      });
    const none = plain.map((a) => a.key);
    const three = budgeted.map((a) => a.key);
    ctx.log(`  budgets: warm-up ${ctx.warmupS}s each`);
    await creates(none, ctx.warmupS);
    await creates(three, ctx.warmupS);
    const runs: { none: LoadResult[]; three: LoadResult[] } = { none: [], three: [] };
    // PostgreSQL's CPU per create, of each run: where budgets cost
    const pgMs: { none: (number | null)[]; three: (number | null)[] } = { none: [], three: [] };
    // none, three, three, none: throughput drifts down as the run's renders pile up (the first
    // and last plain runs differ by up to a fifth), and in this order a steady drift falls on
    // both means alike; in alternation the budgets always ran later than their baseline
    for (const which of ['none', 'three', 'three', 'none'] as const) {
      const [r, cpu] = await withCpu(ctx, svc.child, () =>
        creates(which === 'none' ? none : three, ctx.durationS),
      );
      runs[which].push(r);
      pgMs[which].push(cpuPerRequest(cpu, r).postgres);
    }
    const mean = (rs: LoadResult[], f: (r: LoadResult) => number | null) =>
      rs.reduce((s, r) => s + (f(r) ?? 0), 0) / rs.length;
    const base = { rps: mean(runs.none, (r) => r.rps), p50: mean(runs.none, (r) => r.p50) };
    const rps = mean(runs.three, (r) => r.rps);
    const ratio = base.rps > 0 ? rps / base.rps : null;
    const note = [...runs.none, ...runs.three].map(loadProblem).find(Boolean) ?? undefined;
    ctx.log(
      `  budgets c=${CONNECTIONS}: three budgets ${rps.toFixed(0)}/s, none ${base.rps.toFixed(0)}/s ` +
        `(${ratio?.toFixed(3)}×); PostgreSQL CPU ms per create: three ${pgMs.three.join(', ')}, ` +
        `none ${pgMs.none.join(', ')}`,
    );
    return [
      {
        scenario: 'budgets',
        variant: 'create, three budgets in force',
        concurrency: CONNECTIONS,
        rps: round(rps, 0),
        p50: round(
          mean(runs.three, (r) => r.p50),
          3,
        ),
        p99: round(
          mean(runs.three, (r) => r.p99),
          3,
        ),
        baseline: {
          name: 'create, no budget',
          rps: round(base.rps, 0),
          p50: round(base.p50, 3),
          p99: round(
            mean(runs.none, (r) => r.p99),
            3,
          ),
        },
        ratio: round(ratio, 3),
        target: '≥0.90×',
        pass: ratio !== null && !note && ratio >= 0.9,
        ...(note ? { note } : {}),
        extra: {
          runs: { none: runs.none.map((r) => r.rps), three: runs.three.map((r) => r.rps) },
          postgresCpuMsPerCreate: pgMs,
        },
      },
    ];
  } finally {
    await db.end();
    await svc.stop();
    await ctx.pg.dropDatabase('bench_budgets').catch(() => undefined);
  }
}
