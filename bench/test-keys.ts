// Test keys beside live keys (docs/api.md "Test keys"): the same create, POST /v1/generations, sent with
// a live key and with a test key in alternating rounds of one run, on the same accounts (each has both
// kinds of key). A live create charges the balance and enqueues a render for a worker (role `api`: none
// runs here); a test create moves no money and this process then makes its result itself (one storage
// copy of a cached file and one transaction per render), which is also measured: how long the test
// renders created by a round take to be all finished. Target: test keys cost no more (≥ 0.90× the live
// rate, the noise of two rounds on a shared machine).
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

const ACCOUNTS = 64;

export async function run(ctx: BenchContext): Promise<Result[]> {
  const url = await ctx.pg.createDatabase('bench_test_keys');
  const svc = await startRendergate(ctx, url, { role: 'api' });
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const accounts = await Promise.all(
      Array.from({ length: ACCOUNTS }, () => makeAccount(svc.base)),
    );
    const live = accounts.map((a) => a.key);
    const test = await Promise.all(
      accounts.map(
        async (a) =>
          (
            await admin(svc.base, 'POST', `/accounts/${a.accountId}/keys`, {
              name: 'bench-test',
              mode: 'test',
              rateLimitPerMinute: 1_000_000,
            })
          ).key,
      ),
    );
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
    /** Seconds until no test render is queued any more, counted from the round's end. */
    const drained = async () => {
      const t0 = performance.now();
      for (;;) {
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM generations WHERE mode = 'test' AND status = 'queued'`,
        );
        if (rows[0].n === 0) return (performance.now() - t0) / 1000;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    ctx.log(`  test-keys: warm-up ${ctx.warmupS}s`);
    await creates(live)(16, ctx.warmupS / 2);
    await creates(test)(16, ctx.warmupS / 2);
    await drained();

    const results: Result[] = [];
    for (const c of ctx.quick ? [16] : [1, 16]) {
      // Two rounds each, alternating, so that neither side always runs on a warmer (or busier) machine.
      const sums = { live: [] as LoadResult[], test: [] as LoadResult[] };
      let drainS = 0;
      let testCreated = 0;
      for (let round_ = 0; round_ < 2; round_++) {
        sums.live.push(await creates(live)(c, ctx.durationS / 2));
        const t = await creates(test)(c, ctx.durationS / 2);
        sums.test.push(t);
        testCreated += t.ok;
        drainS += await drained();
      }
      const avg = (rs: LoadResult[], k: 'rps' | 'p50' | 'p99') =>
        rs.reduce((n, r) => n + (r[k] ?? 0), 0) / rs.length;
      const l = {
        rps: avg(sums.live, 'rps'),
        p50: avg(sums.live, 'p50'),
        p99: avg(sums.live, 'p99'),
      };
      const t = {
        rps: avg(sums.test, 'rps'),
        p50: avg(sums.test, 'p50'),
        p99: avg(sums.test, 'p99'),
      };
      const ratio = l.rps > 0 ? t.rps / l.rps : null;
      const note = [...sums.live, ...sums.test].map(loadProblem).find(Boolean) ?? undefined;
      ctx.log(
        `  test-keys c=${c}: live ${l.rps.toFixed(0)}/s p50 ${l.p50.toFixed(2)} ms, test ${t.rps.toFixed(0)}/s ` +
          `p50 ${t.p50.toFixed(2)} ms; ${testCreated} test renders finished ${drainS.toFixed(2)} s after their rounds`,
      );
      results.push(
        {
          scenario: 'test-keys',
          variant: 'create with a live key',
          concurrency: c,
          rps: round(l.rps, 0),
          p50: round(l.p50, 3),
          p99: round(l.p99, 3),
          baseline: null,
          ratio: null,
          target: '-',
          pass: null,
        },
        {
          scenario: 'test-keys',
          variant: 'create with a test key',
          concurrency: c,
          rps: round(t.rps, 0),
          p50: round(t.p50, 3),
          p99: round(t.p99, 3),
          baseline: {
            name: 'live key',
            rps: round(l.rps, 0),
            p50: round(l.p50, 3),
            p99: round(l.p99, 3),
          },
          ratio: round(ratio, 3),
          target: '≥0.90×',
          pass: ratio !== null && !note && ratio >= 0.9,
          ...(note ? { note } : {}),
          extra: { testRenders: testCreated, secondsToFinishAfterRounds: round(drainS, 2) },
        },
      );
    }
    return results;
  } finally {
    await db.end().catch(() => undefined);
    await svc.stop();
    await ctx.pg.dropDatabase('bench_test_keys').catch(() => undefined);
  }
}
