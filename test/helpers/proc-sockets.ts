// Counting this process's own TCP sockets to one port, from /proc: the fds of /proc/self/fd that are
// sockets, matched by inode against the connections of /proc/net/tcp and tcp6.
import { readFile, readdir, readlink } from 'node:fs/promises';

async function inodesToPort(port: number): Promise<Set<string>> {
  const out = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const remotePort = parseInt(f[2].split(':')[1], 16);
      if (remotePort === port) out.add(f[9]);
    }
  }
  return out;
}

/** Open sockets of this process whose remote end is `port` (client sides of connections to it). */
export async function socketsTo(port: number): Promise<number> {
  const inodes = await inodesToPort(port);
  let n = 0;
  for (const fd of await readdir('/proc/self/fd')) {
    const link = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m && inodes.has(m[1])) n++;
  }
  return n;
}
