// CPU time spent by the server child, by PostgreSQL (postmaster and its backends) and by this process
// (the load generator) over a window: with --profile, it tells whether the database or Node is the
// bottleneck. Linux /proc only; elsewhere the figures are null.
import fs from 'node:fs';
import path from 'node:path';

const TICK_MS = 10; // USER_HZ is 100 on Linux

function procCpu(pid: number): { ppid: number; ms: number; sysMs: number } | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      ppid: Number(f[1]),
      ms: (Number(f[11]) + Number(f[12])) * TICK_MS,
      sysMs: Number(f[12]) * TICK_MS,
    };
  } catch {
    return null;
  }
}

function pgProcesses(pgData: string): Map<number, number> {
  const out = new Map<number, number>();
  let postmaster: number;
  try {
    postmaster = Number(
      fs.readFileSync(path.join(pgData, 'postmaster.pid'), 'utf8').split('\n')[0],
    );
  } catch {
    return out;
  }
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    const p = procCpu(pid);
    if (p && (pid === postmaster || p.ppid === postmaster)) out.set(pid, p.ms);
  }
  return out;
}

/** `serverSysMs`: the part of `serverMs` spent in the kernel (system calls: sockets, files). */
export interface CpuWindow {
  wallMs: number;
  serverMs: number | null;
  serverSysMs: number | null;
  postgresMs: number | null;
  loadGeneratorMs: number;
}

export function cpuWindow(serverPid: number, pgData: string): () => CpuWindow {
  const t0 = performance.now();
  const s0 = procCpu(serverPid);
  const pg0 = pgProcesses(pgData);
  const self0 = process.cpuUsage();
  return () => {
    const s1 = procCpu(serverPid);
    const pg1 = pgProcesses(pgData);
    const self = process.cpuUsage(self0);
    let pgMs = 0;
    for (const [pid, ms] of pg1) pgMs += ms - (pg0.get(pid) ?? 0);
    return {
      wallMs: Math.round(performance.now() - t0),
      serverMs: s0 && s1 ? s1.ms - s0.ms : null,
      serverSysMs: s0 && s1 ? s1.sysMs - s0.sysMs : null,
      postgresMs: pg1.size ? pgMs : null,
      loadGeneratorMs: Math.round((self.user + self.system) / 1000),
    };
  };
}
