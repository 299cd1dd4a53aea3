// Summarises a V8 CPU profile (.cpuprofile, as written by --cpu-prof or the inspector) into the
// functions and the code areas with the most self time. A native or Node-core frame is charged to
// the nearest package or project file that called it, so "writev" shows up under whoever wrote to the
// socket (pg, fastify) rather than as anonymous native time. The profiler's own frames are dropped.
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  name: string;
  file: string;
  busyMs: number;
  idleMs: number;
  /** Time the process was stopped (gaps of a second or more between samples), charged to nothing. */
  pausedMs: number;
  functions: Array<{ fn: string; where: string; area: string; selfMs: number; pct: number }>;
  areas: Array<{ area: string; selfMs: number; pct: number }>;
  /** CPU time over the profiled window (cpu.ts), when measured. */
  cpu?: {
    wallMs: number;
    serverMs: number | null;
    serverSysMs: number | null;
    postgresMs: number | null;
    loadGeneratorMs: number;
  };
  /** The statements that took PostgreSQL the most time over the window (pg_stat_statements). */
  statements?: Array<{
    calls: number;
    totalMs: number;
    pct: number;
    meanExecMs: number;
    meanPlanMs: number;
    walBytesPerCall: number;
    query: string;
  }>;
}

/** The package or project file a script URL belongs to, or null for Node core and natives. */
function userArea(url: string): string | null {
  if (!url || url.startsWith('node:')) return null;
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const file = url.replace(/^file:\/\//, '');
  const rel = path.relative(process.cwd(), file);
  return rel.startsWith('..') ? file : rel;
}

/** A script URL as a reader wants it: inside its package, or relative to the project. */
function shortUrl(url: string): string {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  if (url.startsWith('node:')) return url;
  const file = url.replace(/^file:\/\//, '');
  const rel = path.relative(process.cwd(), file);
  return rel.startsWith('..') ? file : rel;
}

/** A gap between two samples this long is a stopped process (see summarise). */
const PAUSE_MS = 1_000;

export function summarise(name: string, file: string, p: CpuProfile, top = 15): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const areaOf = new Map<number, string>();
  const profilerOwn = new Set<number>();
  // Parents come before their children in `nodes`, so one pass settles every node's area.
  for (const n of p.nodes) {
    const up = parent.get(n.id);
    const { url, functionName } = n.callFrame;
    if (url === 'node:inspector' || (up !== undefined && profilerOwn.has(up)))
      profilerOwn.add(n.id);
    const own = userArea(url);
    const inherited = up !== undefined ? areaOf.get(up) : undefined;
    areaOf.set(
      n.id,
      own ??
        (inherited && !inherited.startsWith('(')
          ? inherited
          : functionName.startsWith('(')
            ? functionName
            : url.startsWith('node:')
              ? 'node core (no caller in user land)'
              : '(native, no caller in user land)'),
    );
  }
  const self = new Map<number, number>();
  // A sample is taken about every millisecond; one that comes a second or more after the last
  // measures a process that was stopped (SIGSTOP on a shared machine), not the function it landed
  // in: that time is reported as paused, not charged to the function.
  let pausedMs = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const ms = (p.timeDeltas[i] ?? 0) / 1000;
    if (ms >= PAUSE_MS) pausedMs += ms;
    else self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + ms);
  }
  const fns = new Map<string, { fn: string; where: string; area: string; selfMs: number }>();
  const areas = new Map<string, number>();
  let idleMs = 0;
  let busyMs = 0;
  for (const [id, ms] of self) {
    if (profilerOwn.has(id)) continue;
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const fn = functionName || '(anonymous)';
    if (fn === '(idle)') {
      idleMs += ms;
      continue;
    }
    busyMs += ms;
    const area = areaOf.get(id)!;
    const where = url ? `${shortUrl(url)}:${lineNumber + 1}` : '';
    const k = `${fn}@${where}@${area}`;
    const e = fns.get(k) ?? { fn, where, area, selfMs: 0 };
    e.selfMs += ms;
    fns.set(k, e);
    areas.set(area, (areas.get(area) ?? 0) + ms);
  }
  const pct = (ms: number) => Math.round((ms / busyMs) * 1000) / 10;
  return {
    name,
    file,
    busyMs: Math.round(busyMs),
    idleMs: Math.round(idleMs),
    pausedMs: Math.round(pausedMs),
    functions: [...fns.values()]
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, top)
      .map((f) => ({ ...f, selfMs: Math.round(f.selfMs), pct: pct(f.selfMs) })),
    areas: [...areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([a, ms]) => ({ area: a, selfMs: Math.round(ms), pct: pct(ms) })),
  };
}

export function formatSummary(s: ProfileSummary): string {
  const paused = s.pausedMs ? `, ${s.pausedMs} ms stopped (not charged)` : '';
  const lines = [
    `profile ${s.name}: ${s.busyMs} ms on CPU, ${s.idleMs} ms idle${paused} (${s.file})`,
  ];
  if (s.cpu) {
    const c = s.cpu;
    lines.push(
      `  CPU over ${(c.wallMs / 1000).toFixed(1)} s wall: server ${c.serverMs ?? '?'} ms (${c.serverSysMs ?? '?'} ms of it in the kernel), ` +
        `PostgreSQL ${c.postgresMs ?? '?'} ms, load generator ${c.loadGeneratorMs} ms`,
    );
  }
  lines.push('  self time by caller area (natives charged to their caller):');
  for (const a of s.areas.slice(0, 12))
    lines.push(`    ${a.pct.toFixed(1).padStart(5)}%  ${a.area}`);
  lines.push('  top functions by self time:');
  for (const f of s.functions) {
    const via = f.where.startsWith(f.area) ? '' : `  [via ${f.area}]`;
    lines.push(
      `    ${f.pct.toFixed(1).padStart(5)}%  ${f.fn}${f.where ? `  ${f.where}` : ''}${via}`,
    );
  }
  if (s.statements?.length) {
    lines.push('  PostgreSQL statements by time (execution + planning):');
    for (const q of s.statements) {
      lines.push(
        `    ${q.pct.toFixed(1).padStart(5)}%  ${String(q.calls).padStart(6)} calls  exec ${q.meanExecMs.toFixed(3)} ms  plan ${q.meanPlanMs.toFixed(3)} ms  ` +
          `WAL ${q.walBytesPerCall} B/call  ${q.query.slice(0, 110)}`,
      );
    }
  }
  return lines.join('\n');
}
