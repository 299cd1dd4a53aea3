// What every scenario gets from run.ts: the run's settings, its PostgreSQL and scratch directory.
import fs from 'node:fs';
import path from 'node:path';
import type { BenchPostgres } from './pg.ts';
import type { Child } from './proc.ts';
import { cpuWindow } from './cpu.ts';
import { formatSummary, summarise, type CpuProfile, type ProfileSummary } from './profile.ts';

export interface BenchContext {
  quick: boolean;
  /** Profile the Rendergate child during measured runs (--profile). */
  profile: boolean;
  /** Seconds of each measured load run, and of the warm-up before a series. */
  durationS: number;
  warmupS: number;
  tmp: string;
  pg: BenchPostgres;
  profileDir: string;
  profiles: ProfileSummary[];
  log: (msg: string) => void;
}

/**
 * Runs `fn` with the child's CPU profiler on when --profile is given, and keeps the summary along with
 * the CPU time the child, PostgreSQL and the load generator used meanwhile.
 */
export async function profiled<T>(
  ctx: BenchContext,
  child: Child,
  name: string,
  fn: () => Promise<T>,
  pg: BenchPostgres = ctx.pg,
): Promise<T> {
  if (!ctx.profile) return fn();
  await child.call({ type: 'profile-start' });
  const statements = await pg.resetStatementStats();
  const cpu = cpuWindow(child.pid, pg.dataDir);
  try {
    return await fn();
  } finally {
    const used = cpu();
    fs.mkdirSync(ctx.profileDir, { recursive: true });
    const file = path.join(ctx.profileDir, `${name}.cpuprofile`);
    await child.call({ type: 'profile-stop', file });
    const s = {
      ...summarise(name, file, JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile),
      cpu: used,
      ...(statements ? { statements: await pg.topStatements() } : {}),
    };
    ctx.profiles.push(s);
    ctx.log(formatSummary(s));
  }
}
