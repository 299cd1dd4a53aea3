// Parent side of receiver-child.ts: a well-behaved webhook receiver in its own process, and the moment
// each generation's event arrived there.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./receiver-child.ts', import.meta.url));

export interface Receipt {
  generationId: string;
  type: string;
  /** wallNow() in the receiver when the request's body had arrived, ms. */
  at: number;
}

export async function startReceiver() {
  const proc = fork(SCRIPT, [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const received = new Map<string, Receipt>();
  const waiters = new Map<string, () => void>();
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`receiver exited (${code})`)));
    proc.on('message', (m: Receipt | { port: number }) => {
      if ('port' in m) return resolve(m.port);
      received.set(`${m.generationId} ${m.type}`, m);
      waiters.get(`${m.generationId} ${m.type}`)?.();
    });
  });
  return {
    url: `http://127.0.0.1:${port}/ok`,
    /** The receipt of `type` for `generationId`, once it arrives (rejects after `timeoutMs`). */
    receipt(generationId: string, type: string, timeoutMs: number): Promise<Receipt> {
      const k = `${generationId} ${type}`;
      const got = received.get(k);
      if (got) return Promise.resolve(got);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => {
          waiters.delete(k);
          reject(new Error(`no ${type} for ${generationId} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.set(k, () => {
          clearTimeout(t);
          waiters.delete(k);
          resolve(received.get(k)!);
        });
      });
    },
    close: () =>
      new Promise<void>((r) => {
        if (proc.exitCode !== null) return r();
        proc.once('exit', () => r());
        proc.kill();
      }),
  };
}
