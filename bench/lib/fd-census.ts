// What a process's open file descriptors are (Linux /proc): each fd's target, and for a TCP socket the
// peer it talks to, found by matching the socket's inode in /proc/<pid>/net/tcp{,6}. The soak uses it
// to say which descriptors a load left behind: connections to PostgreSQL, to webhook receivers, from
// clients, listening sockets, pipes, event polls (one per thread with an event loop), files by path.
import fs from 'node:fs';

export interface FdCensus {
  total: number;
  /** kind -> count, e.g. "tcp to postgres", "anon_inode:[eventfd]", "file /tmp/...". */
  kinds: Record<string, number>;
  rssMb: number;
  /** Threads of the process (main, libuv pool, V8, worker threads). */
  threads: number;
}

interface TcpRow {
  local: number;
  remote: number;
  state: string;
}

const TCP_STATES: Record<string, string> = {
  '01': 'established',
  '06': 'time_wait',
  '07': 'close',
  '08': 'close_wait',
  '0A': 'listen',
};

function tcpTable(pid: number): Map<string, TcpRow> {
  const out = new Map<string, TcpRow>();
  for (const file of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(`/proc/${pid}/net/${file}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const port = (a: string) => parseInt(a.split(':')[1], 16);
      out.set(f[9], {
        local: port(f[1]),
        remote: port(f[2]),
        state: TCP_STATES[f[3]] ?? `state ${f[3]}`,
      });
    }
  }
  return out;
}

/**
 * The census of `pid`'s descriptors. `ports` names peers by port (say { 5432: 'postgres' }); a TCP socket
 * whose local port is `serverPort` is a client's connection (or the listener).
 */
export function fdCensus(
  pid: number,
  o: { serverPort: number; ports: Record<number, string> },
): FdCensus {
  const tcp = tcpTable(pid);
  const kinds: Record<string, number> = {};
  const fds = fs.readdirSync(`/proc/${pid}/fd`);
  for (const fd of fds) {
    let target: string;
    try {
      target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    let kind: string;
    const socket = /^socket:\[(\d+)\]$/.exec(target);
    if (socket) {
      const row = tcp.get(socket[1]);
      if (!row) kind = 'socket (not TCP: unix or IPC)';
      else if (row.state === 'listen') kind = `tcp listening :${row.local}`;
      else if (row.local === o.serverPort) kind = `tcp from a client (${row.state})`;
      else kind = `tcp to ${o.ports[row.remote] ?? `port ${row.remote}`} (${row.state})`;
    } else if (target.startsWith('anon_inode:') || target.startsWith('pipe:')) {
      kind = target.replace(/:\[\d+\]$/, '').replace(/^anon_inode:/, 'anon_inode ');
    } else kind = `file ${target.replace(/[0-9a-f]{8,}|\d{3,}/g, '*')}`;
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    total: fds.length,
    kinds,
    rssMb: Math.round(Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024),
    threads: Number(/^Threads:\s+(\d+)/m.exec(status)![1]),
  };
}

/** Kinds whose count differs between `a` and `b`, as "kind a -> b", largest change first. */
export function fdDiff(a: FdCensus, b: FdCensus): string[] {
  const keys = new Set([...Object.keys(a.kinds), ...Object.keys(b.kinds)]);
  return [...keys]
    .map((k) => ({ k, x: a.kinds[k] ?? 0, y: b.kinds[k] ?? 0 }))
    .filter((r) => r.x !== r.y)
    .sort((p, q) => Math.abs(q.y - q.x) - Math.abs(p.y - p.x))
    .map((r) => `${r.k} ${r.x} -> ${r.y}`);
}
