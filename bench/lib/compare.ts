// Rendergate against a baseline server, the same requests at each concurrency, interleaved
// (baseline, Rendergate, baseline, Rendergate, ...) so that drift on a shared machine hits both alike.
import type { BenchContext } from './context.ts';
import { profiled } from './context.ts';
import { load, loadProblem, type LoadOptions } from './load.ts';
import { cpuWindow, type CpuWindow } from './cpu.ts';
import { startBare, startFastifyFloor, type Child } from './proc.ts';
import type { Result } from './report.ts';
import { round } from './stats.ts';

type Loaded = Awaited<ReturnType<typeof load>>;
export interface Compared {
  c: number;
  base: Loaded;
  rg: Loaded;
  baseCpu: CpuWindow;
  rgCpu: CpuWindow;
  floor?: Loaded;
}

/** CPU milliseconds per answered request, by process group: steadier than throughput on a busy machine. */
export function cpuPerRequest(cpu: CpuWindow, r: { ok: number }) {
  const per = (ms: number | null) => (ms === null || r.ok === 0 ? null : round(ms / r.ok, 4));
  return {
    server: per(cpu.serverMs),
    serverKernel: per(cpu.serverSysMs),
    postgres: per(cpu.postgresMs),
    loadGenerator: per(cpu.loadGeneratorMs),
  };
}

/** Runs `fn` and reports the CPU the child and PostgreSQL used meanwhile. */
export async function withCpu<T>(
  ctx: BenchContext,
  child: Child,
  fn: () => Promise<T>,
): Promise<[T, CpuWindow]> {
  const done = cpuWindow(child.pid, ctx.pg.dataDir);
  const r = await fn();
  return [r, done()];
}

/**
 * Rendergate at `rg.base + path` against two servers this starts (and stops) answering `body` at the same
 * path: the bare node:http baseline at every concurrency, and the framework floor (a Fastify app with one
 * route and no hooks) at `floorAt` connections.
 */
export async function compareHttp(
  ctx: BenchContext,
  o: {
    name: string;
    concurrencies: number[];
    request: Omit<LoadOptions, 'url' | 'connections' | 'durationS'>;
    rg: { base: string; child: Child };
    path: string;
    body: string;
    floorAt: number;
  },
): Promise<Compared[]> {
  const bare = await startBare(o.body);
  try {
    const floor = await startFastifyFloor(o.body);
    try {
      return await compareWith(ctx, o, bare, floor);
    } finally {
      await floor.child.stop();
    }
  } finally {
    await bare.child.stop();
  }
}

type Server = { base: string; child: Child };

async function compareWith(
  ctx: BenchContext,
  o: Parameters<typeof compareHttp>[1],
  baseline: Server,
  floorServer: Server,
): Promise<Compared[]> {
  const make =
    (base: string) =>
    (c: number, durationS: number): LoadOptions => ({
      ...o.request,
      url: base + o.path,
      connections: c,
      durationS,
    });
  const rgOpts = make(o.rg.base);
  const baseOpts = make(baseline.base);
  const warm = Math.max(...o.concurrencies.filter((c) => c <= 64), 1);
  ctx.log(`  ${o.name}: warm-up ${ctx.warmupS}s each`);
  await load(baseOpts(warm, ctx.warmupS));
  await load(rgOpts(warm, ctx.warmupS));
  const out: Compared[] = [];
  // --profile: the Rendergate run at 64 connections (the targets' concurrency), or the busiest one.
  const profiledAt = o.concurrencies.includes(64) ? 64 : Math.max(...o.concurrencies);
  for (const c of o.concurrencies) {
    const [base, baseCpu] = await withCpu(ctx, baseline.child, () =>
      load(baseOpts(c, ctx.durationS)),
    );
    const run = () => withCpu(ctx, o.rg.child, () => load(rgOpts(c, ctx.durationS)));
    const [rg, rgCpu] =
      c === profiledAt ? await profiled(ctx, o.rg.child, `${o.name}-c${c}`, run) : await run();
    const floor =
      o.floorAt === c ? await load(make(floorServer.base)(c, ctx.durationS)) : undefined;
    const cpu = cpuPerRequest(rgCpu, rg);
    ctx.log(
      `  ${o.name} c=${c}: rendergate ${rg.rps.toFixed(0)}/s p99 ${rg.p99?.toFixed(2)} ms (CPU ms/request: server ${cpu.server} (kernel ${cpu.serverKernel}), PostgreSQL ${cpu.postgres}); ` +
        `baseline ${base.rps.toFixed(0)}/s (server ${cpuPerRequest(baseCpu, base).server}, kernel ${cpuPerRequest(baseCpu, base).serverKernel})`,
    );
    if (floor)
      ctx.log(
        `  ${o.name} c=${c}: framework floor (Fastify, one bare route) ${floor.rps.toFixed(0)}/s p99 ${floor.p99?.toFixed(2)} ms`,
      );
    out.push({ c, base, rg, baseCpu, rgCpu, floor });
  }
  return out;
}

/** A result row for one concurrency of a compareHttp run. */
export function comparedRow(
  scenario: string,
  variant: string,
  baselineName: string,
  x: Compared,
  target: string,
  pass: (ratio: number, x: Compared) => boolean,
): Result {
  const ratio = x.base.rps > 0 ? x.rg.rps / x.base.rps : null;
  const note =
    loadProblem(x.rg) ?? (loadProblem(x.base) ? `baseline: ${loadProblem(x.base)}` : undefined);
  return {
    scenario,
    variant,
    concurrency: x.c,
    rps: round(x.rg.rps, 0),
    p50: round(x.rg.p50, 3),
    p99: round(x.rg.p99, 3),
    baseline: {
      name: baselineName,
      rps: round(x.base.rps, 0),
      p50: round(x.base.p50, 3),
      p99: round(x.base.p99, 3),
    },
    ratio: round(ratio, 3),
    target,
    pass: ratio === null || note ? false : pass(ratio, x),
    ...(note ? { note } : {}),
    extra: {
      ok: x.rg.ok,
      non2xx: x.rg.non2xx,
      errors: x.rg.errors,
      cpuMsPerRequest: cpuPerRequest(x.rgCpu, x.rg),
      baselineCpuMsPerRequest: cpuPerRequest(x.baseCpu, x.base),
    },
  };
}

/** The framework floor's row: a Fastify app with one route, over the same bare server, at one concurrency. */
export function floorRow(scenario: string, x: Compared): Result | null {
  if (!x.floor) return null;
  return {
    scenario,
    variant: 'framework floor: Fastify, one route',
    concurrency: x.c,
    rps: round(x.floor.rps, 0),
    p50: round(x.floor.p50, 3),
    p99: round(x.floor.p99, 3),
    baseline: { name: 'bare http', rps: round(x.base.rps, 0) },
    ratio: round(x.base.rps > 0 ? x.floor.rps / x.base.rps : null, 3),
    target: '-',
    pass: null,
    ...(loadProblem(x.floor) ? { note: loadProblem(x.floor)! } : {}),
  };
}
