// `npm run bench [-- --only poll,quote] [-- --quick] [-- --profile]`
//
// Runs every scenario (or the ones named) against one embedded PostgreSQL in a temporary directory,
// each against a baseline measured in the same run, then prints a table and, as the LAST line of
// output, one JSON line with every figure so runs can be compared:
//   npm run bench | tail -1 > run.json
// The soak's seconds per side: RENDERGATE_BENCH_SOAK_SECONDS (bench/soak.ts).
// Progress goes to stderr. --quick: shorter runs and fewer concurrencies, to check the benchmark
// itself. --profile: CPU-profiles the Rendergate child during measured runs and prints the functions
// with the most self time (the .cpuprofile files are kept; open them in Chrome DevTools), and the CPU
// time the server, PostgreSQL and the load generator used meanwhile, and (pg_stat_statements, loaded
// for profiled runs only) the statements that took PostgreSQL the most time.
// What-if runs: RENDERGATE_BENCH_PRELOAD=<file.ts> is imported by every Rendergate server child before
// the service starts, e.g. to stub one component and measure the rest (see bench/lib/server-proc.ts).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchContext } from './lib/context.ts';
import { formatSummary } from './lib/profile.ts';
import { BenchPostgres } from './lib/pg.ts';
import { table, type Result } from './lib/report.ts';
import * as poll from './poll.ts';
import * as quote from './quote.ts';
import * as create from './create.ts';
import * as budgets from './budgets.ts';
import * as dispatch from './dispatch.ts';
import * as render from './render.ts';
import * as growth from './growth.ts';
import * as text from './text.ts';
import * as wait from './wait.ts';
import * as events from './events.ts';
import * as webhooks from './webhooks.ts';
import * as backends from './backends.ts';
import * as studio from './studio.ts';
import * as usage from './usage.ts';
import * as openai from './openai.ts';
import * as soak from './soak.ts';
import * as testKeys from './test-keys.ts';

const SCENARIOS: Record<string, (ctx: BenchContext) => Promise<Result[]>> = {
  poll: poll.run,
  quote: quote.run,
  create: create.run,
  budgets: budgets.run,
  dispatch: dispatch.run,
  render: render.run,
  growth: growth.run,
  text: text.run,
  wait: wait.run,
  events: events.run,
  webhooks: webhooks.run,
  backends: backends.run,
  studio: studio.run,
  usage: usage.run,
  openai: openai.run,
  soak: soak.run,
  'test-keys': testKeys.run,
};

function parseArgs(argv: string[]) {
  let only = Object.keys(SCENARIOS);
  let quick = false;
  let profile = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') quick = true;
    else if (a === '--profile') profile = true;
    else if (a === '--only' || a.startsWith('--only=')) {
      const v = a === '--only' ? argv[++i] : a.slice('--only='.length);
      only = (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const unknown = only.filter((s) => !SCENARIOS[s]);
      if (unknown.length || only.length === 0)
        throw new Error(
          `--only: unknown scenario ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`,
        );
    } else throw new Error(`unknown argument ${a}; use --only a,b  --quick  --profile`);
  }
  return { only, quick, profile };
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const log = (m: string) =>
    process.stderr.write(
      `[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${m}\n`,
    );
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rendergate-bench-'));
  // As root the database runs as the `postgres` user, which must be able to reach its directory.
  fs.chmodSync(tmp, 0o755);
  log(`scratch ${tmp}; scenarios ${args.only.join(', ')}${args.quick ? ' (quick)' : ''}`);
  const pg = await BenchPostgres.start(path.join(tmp, 'pg'));
  if (args.profile) await pg.configure(BenchPostgres.STATEMENT_STATS);
  const ctx: BenchContext = {
    quick: args.quick,
    profile: args.profile,
    durationS: args.quick ? 2 : 4,
    warmupS: args.quick ? 1 : 2,
    tmp,
    pg,
    profiles: [],
    log,
    profileDir: path.join(
      os.tmpdir(),
      `rendergate-bench-profiles-${new Date().toISOString().replace(/[:.]/g, '-')}`,
    ),
  };
  const results: Result[] = [];
  const timings: Record<string, number> = {};
  let stopping = false;
  const cleanup = async () => {
    await pg.stop().catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    stopping = true;
    log('interrupted; cleaning up');
    void cleanup().then(() => process.exit(130));
  });
  try {
    for (const name of args.only) {
      if (stopping) break;
      const t0 = Date.now();
      log(`${name} ...`);
      try {
        results.push(...(await SCENARIOS[name](ctx)));
      } catch (e) {
        log(`${name} failed: ${(e as Error).stack ?? String(e)}`);
        results.push({
          scenario: name,
          variant: 'error',
          concurrency: '-',
          rps: null,
          p50: null,
          p99: null,
          baseline: null,
          ratio: null,
          target: '-',
          pass: false,
          note: (e as Error).message.split('\n')[0].slice(0, 120),
        });
      }
      timings[name] = Math.round((Date.now() - t0) / 100) / 10;
      log(`${name} done in ${timings[name]} s`);
    }
  } finally {
    await cleanup();
  }
  const totalS = Math.round((Date.now() - started) / 100) / 10;
  const out: string[] = ['', table(results), ''];
  const missed = results.filter((r) => r.pass === false);
  out.push(
    `${results.length} rows, ${missed.length} missed; ${totalS} s on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'})`,
  );
  if (ctx.profiles.length) out.push('', ...ctx.profiles.map(formatSummary), '');
  out.push(
    JSON.stringify({
      bench: 'rendergate',
      at: new Date(started).toISOString(),
      meta: {
        commit: gitCommit(),
        node: process.version,
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model ?? null,
        totalMemMb: Math.round(os.totalmem() / 2 ** 20),
        quick: args.quick,
        profile: args.profile,
        durationS: ctx.durationS,
        warmupS: ctx.warmupS,
        scenarios: args.only,
        secondsPerScenario: timings,
        totalS,
      },
      results,
      ...(ctx.profiles.length ? { profiles: ctx.profiles } : {}),
    }),
  );
  process.stdout.write(out.join('\n') + '\n');
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  },
);
