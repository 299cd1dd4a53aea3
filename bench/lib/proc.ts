// Parent side of server-proc.ts: forks a child under tsx and talks to it over IPC.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChildRequest } from './server-proc.ts';

const SCRIPT = fileURLToPath(new URL('./server-proc.ts', import.meta.url));

export class Child {
  private seq = 0;
  private waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private exited: Promise<void>;

  private constructor(
    private proc: ChildProcess,
    hello: (v: unknown) => void,
  ) {
    this.waiting.set(0, { resolve: hello, reject: () => {} });
    proc.on('message', (m: { seq: number; ok: boolean; result?: unknown; error?: string }) => {
      const w = this.waiting.get(m.seq);
      if (!w) return;
      this.waiting.delete(m.seq);
      if (m.ok) w.resolve(m.result);
      else w.reject(new Error(`child: ${m.error}`));
    });
    this.exited = new Promise((r) =>
      proc.once('exit', (code, signal) => {
        for (const w of this.waiting.values())
          w.reject(new Error(`bench child exited (${code ?? signal})`));
        this.waiting.clear();
        r();
      }),
    );
  }

  static async start(): Promise<Child> {
    const proc = fork(SCRIPT, [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    let hello!: (v: unknown) => void;
    const ready = new Promise((r) => {
      hello = r;
    });
    const child = new Child(proc, hello);
    await Promise.race([
      ready,
      child.exited.then(() => {
        throw new Error('bench child died at start');
      }),
    ]);
    return child;
  }

  get pid(): number {
    return this.proc.pid!;
  }

  call<T = any>(msg: ChildRequest): Promise<T> {
    const seq = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(seq, { resolve, reject });
      this.proc.send({ ...msg, seq });
    });
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const killer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await this.call({ type: 'stop' }).catch(() => undefined);
    await this.exited;
    clearTimeout(killer);
  }
}

/** A bare node:http server answering `body` to every request, in a child. */
export async function startBare(body: string): Promise<{ child: Child; base: string }> {
  const child = await Child.start();
  const { port } = await child.call<{ port: number }>({ type: 'bare', body });
  return { child, base: `http://127.0.0.1:${port}` };
}

/** The framework floor: a Fastify app with nothing but one GET and one POST route answering `body`, in a child. */
export async function startFastifyFloor(body: string): Promise<{ child: Child; base: string }> {
  const child = await Child.start();
  const { port } = await child.call<{ port: number }>({ type: 'fastify', body });
  return { child, base: `http://127.0.0.1:${port}` };
}
