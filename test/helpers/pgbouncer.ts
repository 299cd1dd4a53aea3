// A real PgBouncer (the Debian package, /usr/sbin/pgbouncer) in front of the test run's PostgreSQL, in
// the pool mode a test asks for. Absent on a machine without the package: PGBOUNCER is then null.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { overTcp } from './db.ts';
import { freePort } from './service.ts';
import { waitFor } from './wait.ts';

export const PGBOUNCER =
  ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => fs.existsSync(p)) ?? null;

export interface Bouncer {
  url: string;
  stop: () => Promise<void>;
}

/** PgBouncer on a free port, forwarding every database of `serverUrl` in `mode`. */
export async function startPgBouncer(
  serverUrl: string,
  mode: 'session' | 'transaction',
): Promise<Bouncer> {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed');
  const server = overTcp(serverUrl);
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-pgbouncer-'));
  fs.chmodSync(dir, 0o755);
  const password = decodeURIComponent(server.password);
  fs.writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    `[databases]
* = host=${server.hostname} port=${server.port} user=${decodeURIComponent(server.username)} password=${password}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = any
pool_mode = ${mode}
max_client_conn = 1000
default_pool_size = 60
logfile = ${dir}/pgbouncer.log
pidfile = ${dir}/pgbouncer.pid
`,
    { mode: 0o644 },
  );
  // PgBouncer refuses to run as root; as root, run it as the postgres user (the embedded server's).
  const ids =
    process.getuid?.() === 0
      ? {
          uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
          gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
        }
      : {};
  if (ids.uid !== undefined) fs.chownSync(dir, ids.uid, ids.gid);
  const proc: ChildProcess = spawn(PGBOUNCER, [path.join(dir, 'pgbouncer.ini')], {
    ...ids,
    stdio: 'ignore',
  });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const connects = () =>
    new Promise<boolean>((r) => {
      const s = net
        .connect(port, '127.0.0.1', () => {
          s.destroy();
          r(true);
        })
        .on('error', () => r(false));
    });
  const state = await waitFor(
    'pgbouncer to listen',
    async () => (proc.exitCode !== null ? 'exited' : (await connects()) && 'up'),
    { timeoutMs: 20_000, intervalMs: 100 },
  );
  if (state === 'exited')
    throw new Error(
      `pgbouncer exited: ${fs.readFileSync(path.join(dir, 'pgbouncer.log'), 'utf8')}`,
    );
  const url = new URL(serverUrl);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString(),
    stop: async () => {
      proc.kill('SIGINT');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
