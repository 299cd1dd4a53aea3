// What the default logging costs: the same requests against one Rendergate process at LOG_LEVEL=info
// (the default, one access line per request written to a file) and at `silent`, its logger's level
// changed between rounds, at one concurrency, in interleaved rounds (silent, info, info, silent, ...) so
// that drift on a shared machine hits both alike. One process, not two: two processes started alike
// differ by their own history (what they served before, where V8 and the allocator placed things) by
// more than a line costs. Measured here with two processes, the level's cost moved from 0.70 to 1.02
// of silent's throughput when the processes swapped roles.
import type { BenchContext } from './context.ts';
import { withCpu } from './compare.ts';
import type { CpuWindow } from './cpu.ts';
import { load, loadProblem, type LoadOptions, type LoadResult } from './load.ts';
import type { Child } from './proc.ts';
import type { Result } from './report.ts';
import { round } from './stats.ts';

export async function compareLogLevels(
  ctx: BenchContext,
  o: {
    scenario: string;
    variant: string;
    request: Omit<LoadOptions, 'url' | 'connections' | 'durationS'>;
    path: string;
    /** A service started at LOG_LEVEL=info (its level is set back to info at the end). */
    server: { base: string; child: Child };
    c: number;
    /** Least throughput at info as a share of silent's; null: reported, no target. */
    floor: number | null;
  },
): Promise<Result[]> {
  const opts = (base: string, durationS: number): LoadOptions => ({
    ...o.request,
    url: base + o.path,
    connections: o.c,
    durationS,
  });
  const level = (l: 'info' | 'silent') => o.server.child.call({ type: 'log-level', level: l });
  // Warmed at both levels, each as long as a measured run, twice.
  for (const l of ['silent', 'info', 'silent', 'info'] as const) {
    await level(l);
    await load(opts(o.server.base, ctx.durationS));
  }
  const rounds = ctx.quick ? 2 : 4;
  const info: LoadResult[] = [];
  const silent: LoadResult[] = [];
  const infoCpu: CpuWindow[] = [];
  const silentCpu: CpuWindow[] = [];
  // Each side goes first in every other round: a run right after another one starts while the load
  // generator still cleans up after it, which measured up to a tenth slower on this machine.
  const sides = {
    silent: { level: 'silent' as const, runs: silent, cpus: silentCpu },
    info: { level: 'info' as const, runs: info, cpus: infoCpu },
  };
  try {
    for (let i = 0; i < rounds; i++) {
      for (const side of i % 2 === 0 ? [sides.silent, sides.info] : [sides.info, sides.silent]) {
        await level(side.level);
        const [run, cpu] = await withCpu(ctx, o.server.child, () =>
          load(opts(o.server.base, ctx.durationS)),
        );
        side.runs.push(run);
        side.cpus.push(cpu);
      }
    }
  } finally {
    await level('info');
  }
  // CPU per request, steadier than throughput on a shared machine, over all rounds of each side.
  const cpuMs = (runs: LoadResult[], cpus: CpuWindow[]) =>
    round(
      cpus.reduce((t, c) => t + (c.serverMs ?? NaN), 0) / runs.reduce((t, r) => t + r.ok, 0),
      4,
    );
  const mean = (rs: LoadResult[], k: 'rps' | 'p50' | 'p99') =>
    rs.reduce((sum, r) => sum + (r[k] ?? NaN), 0) / rs.length;
  const infoRps = mean(info, 'rps');
  const silentRps = mean(silent, 'rps');
  const ratio = silentRps > 0 ? infoRps / silentRps : null;
  const note = [...info, ...silent].map(loadProblem).find((p) => p) ?? undefined;
  ctx.log(
    `  ${o.scenario} c=${o.c}: LOG_LEVEL=info ${infoRps.toFixed(0)}/s, silent ${silentRps.toFixed(0)}/s (${rounds} interleaved rounds, one process); server CPU ms/request info ${cpuMs(info, infoCpu)}, silent ${cpuMs(silent, silentCpu)}`,
  );
  return [
    {
      scenario: o.scenario,
      variant: `${o.variant} at LOG_LEVEL=silent`,
      concurrency: o.c,
      rps: round(silentRps, 0),
      p50: round(mean(silent, 'p50'), 3),
      p99: round(mean(silent, 'p99'), 3),
      baseline: null,
      ratio: null,
      target: '-',
      pass: null,
      extra: { serverCpuMsPerRequest: cpuMs(silent, silentCpu) },
    },
    {
      scenario: o.scenario,
      variant: `${o.variant} at LOG_LEVEL=info vs silent`,
      concurrency: o.c,
      rps: round(infoRps, 0),
      p50: round(mean(info, 'p50'), 3),
      p99: round(mean(info, 'p99'), 3),
      baseline: { name: 'silent', rps: round(silentRps, 0) },
      ratio: round(ratio, 3),
      target: o.floor === null ? '-' : `≥${o.floor.toFixed(2)}×`,
      pass: o.floor === null ? null : ratio === null || note ? false : ratio >= o.floor,
      ...(note ? { note } : {}),
      extra: {
        serverCpuMsPerRequest: cpuMs(info, infoCpu),
        silentServerCpuMsPerRequest: cpuMs(silent, silentCpu),
      },
    },
  ];
}
