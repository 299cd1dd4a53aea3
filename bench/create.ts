// Create: POST /v1/generations with a distinct Idempotency-Key per request, all on one account (every
// create updates that account's balance row, so creates queue on its row lock) and spread over many
// accounts, against the commit-rate ceiling: the same number of connections doing single-row INSERTs,
// each its own durable transaction, straight through pg on the same database. A create is one such
// transaction (plus its reads and four more row writes), so the ratio says how close the API comes to
// what the database can commit. Role `api`: no worker renders what is created.
import pg from 'pg';
import type { BenchContext } from './lib/context.ts';
import { profiled } from './lib/context.ts';
import { cpuPerRequest, withCpu } from './lib/compare.ts';
import { load, loadProblem, type LoadResult } from './lib/load.ts';
import { Child } from './lib/proc.ts';
import type { Result } from './lib/report.ts';
import {
  call,
  IMAGE_TO_VIDEO,
  makeAccount,
  nextIdempotencyKey,
  startRendergate,
} from './lib/service.ts';
import { round } from './lib/stats.ts';

const MANY_ACCOUNTS = 64;

export async function run(ctx: BenchContext): Promise<Result[]> {
  const url = await ctx.pg.createDatabase('bench_create');
  const svc = await startRendergate(ctx, url, { role: 'api' });
  const baseline = await Child.start();
  try {
    const one = await makeAccount(svc.base);
    const many = await Promise.all(
      Array.from({ length: MANY_ACCOUNTS }, () => makeAccount(svc.base)),
    );
    // The baseline's row: about the size of a generation row as created.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    await db.query(
      `CREATE TABLE bench_commit (id bigserial PRIMARY KEY, payload text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
    );
    await db.end();
    const sample = await call(svc.base, 'POST', '/v1/generations', {
      key: one.key,
      body: IMAGE_TO_VIDEO,
      headers: { 'idempotency-key': nextIdempotencyKey() },
    });
    if (sample.status !== 202) throw new Error(`create -> ${sample.status} ${sample.text}`);
    const payload = sample.text;

    const body = JSON.stringify(IMAGE_TO_VIDEO);
    let turn = 0;
    const creates = (keys: string[]) => (c: number, durationS: number) =>
      load({
        url: svc.base + '/v1/generations',
        connections: c,
        durationS,
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
        perRequestHeaders: () => ({
          authorization: `Bearer ${keys[turn++ % keys.length]}`,
          'idempotency-key': nextIdempotencyKey(),
        }),
      });
    const oneAccount = creates([one.key]);
    const manyAccounts = creates(many.map((a) => a.key));
    const commits = (c: number, durationS: number) =>
      baseline.call<{ rps: number; p50: number; p99: number; count: number }>({
        type: 'pgcommit',
        url,
        connections: c,
        durationMs: durationS * 1000,
        payload,
      });

    ctx.log(`  create: warm-up ${ctx.warmupS}s each`);
    await commits(16, ctx.warmupS);
    await oneAccount(16, ctx.warmupS / 2);
    await manyAccounts(16, ctx.warmupS / 2);

    const results: Result[] = [];
    const row = (
      variant: string,
      c: number,
      r: LoadResult,
      base: { rps: number; p50: number; p99: number },
      cpu: ReturnType<typeof cpuPerRequest>,
      baseCpu: ReturnType<typeof cpuPerRequest>,
    ): Result => {
      const ratio = base.rps > 0 ? r.rps / base.rps : null;
      const note = loadProblem(r) ?? undefined;
      return {
        scenario: 'create',
        variant,
        concurrency: c,
        rps: round(r.rps, 0),
        p50: round(r.p50, 3),
        p99: round(r.p99, 3),
        baseline: {
          name: 'pg commits',
          rps: round(base.rps, 0),
          p50: round(base.p50, 3),
          p99: round(base.p99, 3),
        },
        ratio: round(ratio, 3),
        target: '≥0.50×',
        pass: ratio !== null && !note && ratio >= 0.5,
        ...(note ? { note } : {}),
        extra: {
          ok: r.ok,
          non2xx: r.non2xx,
          errors: r.errors,
          cpuMsPerRequest: cpu,
          baselineCpuMsPerCommit: baseCpu,
        },
      };
    };
    for (const c of ctx.quick ? [16] : [1, 16, 64]) {
      const [base, baseCpu] = await withCpu(ctx, baseline, () => commits(c, ctx.durationS));
      // --profile: the API at 16 connections, each variant on its own.
      const api = (name: string, fn: typeof oneAccount) => {
        const run = () => withCpu(ctx, svc.child, () => fn(c, ctx.durationS));
        return c === 16 ? profiled(ctx, svc.child, `create-${name}-c16`, run) : run();
      };
      const [a, aCpu] = await api('one-account', oneAccount);
      const [b, bCpu] = await api('many-accounts', manyAccounts);
      const baseCpuPer = cpuPerRequest(baseCpu, { ok: base.count });
      ctx.log(
        `  create c=${c}: one account ${a.rps.toFixed(0)}/s, ${MANY_ACCOUNTS} accounts ${b.rps.toFixed(0)}/s ` +
          `(PostgreSQL CPU ms/create ${cpuPerRequest(bCpu, b).postgres}); pg commits ${base.rps.toFixed(0)}/s (PostgreSQL CPU ms/commit ${baseCpuPer.postgres})`,
      );
      results.push(
        row('one account', c, a, base, cpuPerRequest(aCpu, a), baseCpuPer),
        row(`${MANY_ACCOUNTS} accounts`, c, b, base, cpuPerRequest(bCpu, b), baseCpuPer),
      );
      if (c === 16) {
        // What the database alone does with a create's five row writes (generation, charge, idempotency
        // record, day usage, balance), one create per call as the API sends them when they do not overlap:
        // how far the API is from its own data model's ceiling, beside the single-row commit ceiling.
        const rows = await baseline.call<{ rps: number; p50: number; p99: number; count: number }>({
          type: 'pgcreate',
          url,
          connections: c,
          durationMs: ctx.durationS * 1000,
          accounts: many,
          modelId: sample.json.modelId,
          inputs: sample.json.inputs,
          cost: sample.json.costCents,
        });
        ctx.log(`  create c=${c}: the create's rows through pg, no HTTP: ${rows.rps.toFixed(0)}/s`);
        results.push({
          scenario: 'create',
          variant: "a create's 5 rows via pg, no HTTP",
          concurrency: c,
          rps: round(rows.rps, 0),
          p50: round(rows.p50, 3),
          p99: round(rows.p99, 3),
          baseline: { name: 'pg commits', rps: round(base.rps, 0) },
          ratio: round(base.rps > 0 ? rows.rps / base.rps : null, 3),
          target: '-',
          pass: null,
        });
      }
    }
    return results;
  } finally {
    await baseline.stop();
    await svc.stop();
    await ctx.pg.dropDatabase('bench_create').catch(() => undefined);
  }
}
