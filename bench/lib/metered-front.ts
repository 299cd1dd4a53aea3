// Parent side of metered-front-child.ts: the floor of a metered chat front, in a process of its own as
// the service is, on a database of the bench's PostgreSQL.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./metered-front-child.ts', import.meta.url));

export async function startMeteredFront(o: { db: string; backend: string; apiKey: string }) {
  const proc = fork(SCRIPT, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, FLOOR_DB: o.db, FLOOR_BACKEND: o.backend, FLOOR_KEY: o.apiKey },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`metered front exited (${code})`)));
    proc.once('message', (m: { port: number }) => resolve(m.port));
  });
  return {
    base: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        if (proc.exitCode !== null) return r();
        proc.once('exit', () => r());
        proc.disconnect();
      }),
  };
}
