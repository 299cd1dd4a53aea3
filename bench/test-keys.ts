// Test keys beside live keys (docs/api.md "Test keys"): the same create, POST /v1/generations, sent with
// a live key and with a test key in alternating rounds of one run, on the same accounts (each has both
// kinds of key). Two settings:
//   files  model B (image-to-video, a video result) against an API process (role `api`, no worker).
//          live: the create only (the charge: balance, ledger entry, key's day; the queued render).
//                Its render is not counted: it runs on a worker and a model server (GPU seconds, which
//                a test key exists to spare); there is no stand-in model server for a video here.
//          test: the create (no balance, no ledger entry; the key's day is counted) AND the video result
//                this same process makes for it (a stored object shared per content,
//                src/queue/test-stored.ts): recorded by the create itself once that object is at hand
//                (migrations/019), else after it, a batch per statement (src/queue/test-render.ts).
//                Every round ends with each test render of the run checked succeeded (not merely
//                no longer queued), so a result that was not made can not pass for a fast one.
//          So the test side does strictly more in its window than the live one.
//   renders  the shot-list (text) model against `serve` (API and worker in one process), whose model
//          server is replaced by an instant one: both sides are timed to their finished results, the
//          live one through the worker's claim, run and record, the test one through the test render.
// Each round is timed until every render it created is finished (drained), so rates are results per
// second, not accepted creates (for files/live, which renders nothing here, creates per second). Also
// reported: the create rate and latency over the round, and the CPU time the server process and
// PostgreSQL used per create over the side's whole window. Target: test keys cost no more, test ≥ 0.90×
// live (the noise of two rounds on a shared machine).
import pg from 'pg';
import { profiled, type BenchContext } from './lib/context.ts';
import { cpuWindow, type CpuWindow } from './lib/cpu.ts';
import { load, loadProblem, type LoadResult } from './lib/load.ts';
import type { Result } from './lib/report.ts';
import {
  admin,
  IMAGE_TO_VIDEO,
  makeAccount,
  nextIdempotencyKey,
  startRendergate,
  type Service,
} from './lib/service.ts';
import { round } from './lib/stats.ts';

const ACCOUNTS = 64;
const DRAIN_LIMIT_MS = 180_000;
const SHOT_LIST = {
  modelId: 'rendergate/shot-list',
  inputs: { text: 'A lighthouse at dusk. Waves break below. A gull lands.' },
};

type Mode = 'live' | 'test';

interface Setting {
  name: 'files' | 'renders';
  body: unknown;
  /** The live side's renders are made (and waited for) in this setting. */
  liveRendered: boolean;
}

export async function run(ctx: BenchContext): Promise<Result[]> {
  const results: Result[] = [];
  results.push(
    ...(await setting(ctx, { name: 'files', body: IMAGE_TO_VIDEO, liveRendered: false })),
    ...(await setting(ctx, { name: 'renders', body: SHOT_LIST, liveRendered: true })),
  );
  return results;
}

/** The live key and test key of each of ACCOUNTS accounts. */
async function keys(svc: Service): Promise<Record<Mode, string[]>> {
  const accounts = await Promise.all(Array.from({ length: ACCOUNTS }, () => makeAccount(svc.base)));
  const test = await Promise.all(
    accounts.map(
      async (a) =>
        (
          await admin(svc.base, 'POST', `/accounts/${a.accountId}/keys`, {
            name: 'bench-test',
            mode: 'test',
            rateLimitPerMinute: 1_000_000_000, // the admin API sets any rate; a quiet machine passes a million a minute
          })
        ).key,
    ),
  );
  return { live: accounts.map((a) => a.key), test };
}

async function setting(ctx: BenchContext, o: Setting): Promise<Result[]> {
  const dbName = `bench_test_keys_${o.name}`;
  const url = await ctx.pg.createDatabase(dbName);
  const svc = await startRendergate(
    ctx,
    url,
    o.liveRendered ? { role: 'serve', instantShotList: true } : { role: 'api' },
  );
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const byMode = await keys(svc);
    const body = JSON.stringify(o.body);
    let turn = 0;
    const creates = (mode: Mode, c: number, durationS: number) =>
      load({
        url: svc.base + '/v1/generations',
        connections: c,
        durationS,
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
        perRequestHeaders: () => ({
          authorization: `Bearer ${byMode[mode][turn++ % ACCOUNTS]}`,
          'idempotency-key': nextIdempotencyKey(),
        }),
      });
    /** Seconds until no render of `mode` is queued any more (0 for live renders nobody makes here). */
    const drained = async (mode: Mode) => {
      if (mode === 'live' && !o.liveRendered) return 0;
      const t0 = performance.now();
      for (;;) {
        if (performance.now() - t0 > DRAIN_LIMIT_MS)
          throw new Error(`${mode} renders still queued ${DRAIN_LIMIT_MS / 1000} s after a round`);
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM generations WHERE mode = $1 AND status = 'queued'`,
          [mode],
        );
        if (rows[0].n === 0) return (performance.now() - t0) / 1000;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    /** Throws unless every test render made so far succeeded with its result. */
    const allSucceeded = async () => {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM generations WHERE mode = 'test'
           AND (status <> 'succeeded' OR (content_key IS NULL AND text_output IS NULL))`,
      );
      if (rows[0].n > 0) throw new Error(`${rows[0].n} test renders ended without their result`);
    };
    ctx.log(`  test-keys ${o.name}: warm-up ${ctx.warmupS}s`);
    for (const mode of ['live', 'test'] as const) {
      await creates(mode, 16, ctx.warmupS / 2);
      await drained(mode);
    }

    const results: Result[] = [];
    const concurrencies = ctx.quick || o.liveRendered ? [16] : [1, 16];
    // Live renders go through the worker at its own pace: shorter rounds keep their drain short.
    const roundS = o.liveRendered ? ctx.durationS / 4 : ctx.durationS / 2;
    for (const c of concurrencies) {
      // Two rounds each, alternating, so that neither side always runs on a warmer (or busier) machine.
      const runs: Record<Mode, { load: LoadResult; drainS: number; cpu: CpuWindow }[]> = {
        live: [],
        test: [],
      };
      for (let r = 0; r < 2; r++)
        for (const mode of ['live', 'test'] as const) {
          // --profile: the first round of each side, its drain included (bench/lib/context.ts).
          const measure = async () => {
            const window = cpuWindow(svc.child.pid, ctx.pg.dataDir);
            const l = await creates(mode, c, roundS);
            const drainS = await drained(mode);
            const cpu = window();
            if (mode === 'test') await allSucceeded(); // outside the window: not the side's work
            runs[mode].push({ load: l, drainS, cpu });
          };
          if (r === 0) await profiled(ctx, svc.child, `test-keys-${o.name}-${mode}-c${c}`, measure);
          else await measure();
        }
      const side = (mode: Mode) => {
        const rs = runs[mode];
        const made = rs.reduce((n, x) => n + x.load.ok, 0);
        const seconds = rs.reduce((n, x) => n + x.load.durationS, 0);
        const drainS = rs.reduce((n, x) => n + x.drainS, 0);
        const cpuKnown = rs.every((x) => x.cpu.serverMs !== null && x.cpu.postgresMs !== null);
        const cpuMs = rs.reduce((n, x) => n + (x.cpu.serverMs ?? 0) + (x.cpu.postgresMs ?? 0), 0);
        return {
          made,
          createRps: made / seconds,
          rps: made / (seconds + drainS),
          drainS,
          p50: rs.reduce((n, x) => n + (x.load.p50 ?? 0), 0) / rs.length,
          p99: rs.reduce((n, x) => n + (x.load.p99 ?? 0), 0) / rs.length,
          cpuMsPerCreate: cpuKnown && made > 0 ? round(cpuMs / made, 3) : null,
          note: rs.map((x) => loadProblem(x.load)).find(Boolean) ?? undefined,
        };
      };
      const l = side('live');
      const t = side('test');
      const ratio = l.rps > 0 ? t.rps / l.rps : null;
      const note = l.note ?? t.note;
      const what = (x: typeof l) =>
        `${x.rps.toFixed(0)}/s (creates ${x.createRps.toFixed(0)}/s, p50 ${x.p50.toFixed(2)} ms, ` +
        `drained ${x.drainS.toFixed(2)} s after), ${x.cpuMsPerCreate ?? '-'} CPU ms/create`;
      ctx.log(`  test-keys ${o.name} c=${c}: live ${what(l)}; test ${what(t)}`);
      const extra = (x: typeof l) => ({
        createsPerSecond: round(x.createRps, 0),
        created: x.made,
        secondsToFinishAfterRounds: round(x.drainS, 2),
        cpuMsPerCreate: x.cpuMsPerCreate,
      });
      results.push(
        {
          scenario: 'test-keys',
          variant: o.liveRendered
            ? 'live create + its render (instant model)'
            : 'live create (render not counted)',
          concurrency: c,
          rps: round(l.rps, 0),
          p50: round(l.p50, 3),
          p99: round(l.p99, 3),
          baseline: null,
          ratio: null,
          target: '-',
          pass: null,
          extra: extra(l),
        },
        {
          scenario: 'test-keys',
          variant: o.liveRendered
            ? 'test create + its text result'
            : 'test create + its video result',
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
          extra: extra(t),
        },
      );
    }
    return results;
  } finally {
    await db.end().catch(() => undefined);
    await svc.stop();
    await ctx.pg.dropDatabase(dbName).catch(() => undefined);
  }
}
