// The service as its own process (`node src/main.ts serve`), as an operator runs it, so that tests can
// kill it with SIGKILL and start it again on the same data dir.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './service.ts';
import { waitFor } from './wait.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Spawned {
  proc: ChildProcess;
  base: string;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** `entry`: how node runs the service: from the sources through tsx (default) or the built dist/main.js. */
export async function spawnService(
  env: Record<string, string>,
  args: string[] = ['serve'],
  entry: string[] = ['--import', 'tsx', 'src/main.ts'],
): Promise<Spawned> {
  const port = Number(env.PORT) || (await freePort());
  let out = '';
  const proc = spawn(process.execPath, [...entry, ...args], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout.on('data', (d) => {
    out += d;
  });
  proc.stderr.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  const base = `http://127.0.0.1:${port}`;
  const answering = waitFor(
    'the service to answer',
    () =>
      fetch(`${base}/v1/me`).then(
        () => true,
        () => false,
      ),
    { intervalMs: 100 },
  );
  const died = exited.then((code) => {
    throw new Error(`service exited (${code}): ${out}`);
  });
  try {
    await Promise.race([answering, died]);
  } catch (e) {
    proc.kill('SIGKILL');
    throw new Error(`service did not answer: ${out}`, { cause: e });
  }
  died.catch(() => {
    /* an exit after the start is the test's to see, through `exited` */
  });
  return { proc, base, port, output: () => out, exited };
}

/** The URL of the embedded PostgreSQL running on a data dir. */
export function embeddedUrl(dataDir: string): string {
  const password = fs.readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim();
  const port = fs
    .readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')
    .split('\n')[3];
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}
