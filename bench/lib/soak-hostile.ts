// The soak's hostile account (bench/soak.ts): renders feeding webhook endpoints that drip their answer
// forever or never answer (test/helpers/hostile-receiver.ts), a flood of uploads of noise images, and a
// flood of wrong passwords at the studio's sign-in. `parts` picks which of the three run, so a run can
// tell which one costs the well-behaved account what (RENDERGATE_BENCH_SOAK_HOSTILE). It runs in a
// process of its own (soak-hostile-child.ts, started by startHostile), at the lowest CPU priority.
import { execFileSync, fork } from 'node:child_process';
import crypto from 'node:crypto';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { call, makeAccount } from './service.ts';
import type { hostileReceiver } from '../../test/helpers/hostile-receiver.ts';

export type HostilePart = 'webhooks' | 'uploads' | 'signins';
/** The default RENDERGATE_MAX_RATE_LIMIT_PER_MINUTE: the most an owner may give a key. */
export const STRANGER_RATE_LIMIT_PER_MINUTE = 6_000;
export const HOSTILE_PARTS: HostilePart[] = ['webhooks', 'uploads', 'signins'];

export interface HostileCounts {
  uploads: number;
  signins: number;
  hostileRenders: number;
  /** Wall clock ms when the floods began (after the account and its endpoints were made). */
  floodsAt?: number;
  /** Answers each flood had in each of its first 10 seconds, by kind and status ("upload 201": [..]). */
  firstSeconds?: Record<string, number[]>;
}

export const SHOT_LIST = {
  modelId: 'rendergate/shot-list',
  inputs: { text: 'A gull lands on the pier. The tide turns. Night falls.' },
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function endpoint(base: string, key: string, url: string): Promise<string> {
  const r = await call(base, 'POST', '/v1/webhook-endpoints', { key, body: { url } });
  if (r.status !== 201) throw new Error(`endpoint -> ${r.status} ${r.text}`);
  return r.json.id;
}

/**
 * The image the upload flood sends: 200×200 of noise, a 120 KB PNG. Made before the load starts (the
 * child makes it before it says it is ready): it is the attacker's work, done on its own machine, not
 * a cost of the server's to be measured in the load's first second.
 */
export const noiseImage = () =>
  sharp(crypto.randomBytes(200 * 200 * 3), { raw: { width: 200, height: 200, channels: 3 } })
    .png()
    .toBuffer();

/** One upload of `image` with `key`. */
export const upload = (base: string, key: string, image: Buffer) =>
  fetch(`${base}/v1/uploads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' },
    body: new Uint8Array(image),
  });

/** One sign-in as a browser makes it: the page (its cookie and CSRF token), then the form. */
export async function wrongPassword(base: string, email: string, password: string) {
  const form = await fetch(`${base}/signin`);
  const cookie = form.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  return fetch(`${base}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base, cookie },
    body: new URLSearchParams({ _csrf: token, email, password }),
  });
}

export async function hostile(
  base: string,
  rx: Awaited<ReturnType<typeof hostileReceiver>>,
  o: { until: number; parts: HostilePart[]; counts: HostileCounts; noise: Buffer },
) {
  const { until, counts, noise } = o;
  const svc = { base };
  // A stranger: an account from open sign-up whose owner made its key in the studio, at the highest
  // rate an owner may choose (RENDERGATE_MAX_RATE_LIMIT_PER_MINUTE, default 6,000), not at the
  // operator-granted billion a minute the well-behaved account's key has. Its credit pays for its
  // renders.
  const h = await makeAccount(svc.base, undefined, STRANGER_RATE_LIMIT_PER_MINUTE);
  const email = (await call(svc.base, 'GET', '/v1/me', { key: h.key })).json?.email;
  const ids: string[] = [];
  if (o.parts.includes('webhooks')) {
    for (let i = 0; i < 5; i++) ids.push(await endpoint(svc.base, h.key, rx.url(`/drip/${i}`)));
    for (let i = 0; i < 4; i++) ids.push(await endpoint(svc.base, h.key, rx.url(`/hang/${i}`)));
  }
  const first: Record<string, number[]> = {};
  counts.firstSeconds = first;
  const tally = (what: string, status: number) => {
    const sec = Math.floor((Date.now() - counts.floodsAt!) / 1000);
    if (sec >= 10) return;
    (first[`${what} ${status}`] ??= Array<number>(10).fill(0))[sec]++;
  };
  const renders = async () => {
    while (Date.now() < until) {
      const r = await call(svc.base, 'POST', '/v1/generations', {
        key: h.key,
        body: SHOT_LIST,
        headers: { 'idempotency-key': crypto.randomUUID() },
      });
      tally('render', r.status);
      if (r.status === 202) counts.hostileRenders++;
      await sleep(r.status === 202 ? 200 : 1000);
    }
  };
  const uploads = async () => {
    while (Date.now() < until) {
      const r = await upload(svc.base, h.key, noise);
      await r.arrayBuffer();
      tally('upload', r.status);
      counts.uploads++;
    }
  };
  const signins = async () => {
    while (Date.now() < until) {
      const r = await wrongPassword(
        svc.base,
        email ?? 'nobody@bench.test',
        `wrong ${counts.signins}`,
      );
      await r.arrayBuffer();
      tally('signin', r.status);
      counts.signins++;
    }
  };
  counts.floodsAt = Date.now();
  const loops: Promise<void>[] = [];
  if (o.parts.includes('webhooks')) loops.push(renders(), renders());
  if (o.parts.includes('uploads')) loops.push(uploads(), uploads());
  if (o.parts.includes('signins')) loops.push(signins(), signins());
  await Promise.all(loops);
  // the attacker leaves: its endpoints go, so no new attempt starts; those under way end within 15 s
  for (const id of ids)
    await call(svc.base, 'DELETE', `/v1/webhook-endpoints/${id}`, { key: h.key });
}

const CHILD = fileURLToPath(new URL('./soak-hostile-child.ts', import.meta.url));
/** The CPU priority the hostile process runs at (19, the lowest): see startHostile. */
export const HOSTILE_NICE = 19;

/**
 * Puts every thread of `pid` under SCHED_IDLE (chrt, util-linux, part of every Debian): it runs only
 * on a core nothing else wants, and gives it up the moment the server, PostgreSQL or the load
 * generator wakes. Threads it starts later inherit it. Without chrt, nice 19; Linux applies that to
 * the main thread alone. Says which one it got.
 */
function lowestPriority(pid: number): string {
  os.setPriority(pid, HOSTILE_NICE);
  try {
    execFileSync('chrt', ['--all-tasks', '--idle', '--pid', '0', String(pid)], { stdio: 'ignore' });
    return 'SCHED_IDLE';
  } catch {
    return `nice ${HOSTILE_NICE}`;
  }
}

export interface HostileRun {
  counts: HostileCounts;
  /** CPU the hostile process used over the run, ms (not the server's, not the load generator's). */
  cpuMs: number;
}

/**
 * The hostile account's process (soak-hostile-child.ts) with its receivers listening, at the lowest CPU
 * priority (lowestPriority): on a machine shared with the server and PostgreSQL it takes the CPU they
 * leave idle, as an attacker on a machine of its own would not take theirs at all. The soak prints this and the rates
 * the floods reached, so a reader sees they were still floods.
 */
export async function startHostile() {
  const proc = fork(CHILD, [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`hostile process exited (${code})`));
      const onMessage = (m: { type?: string; error?: string }) => {
        if (m.type !== type && m.type !== 'failed') return;
        proc.off('message', onMessage);
        proc.off('exit', onExit);
        if (m.type === 'failed') reject(new Error(`hostile process: ${m.error}`));
        else resolve(m as T);
      };
      proc.on('message', onMessage);
      proc.once('exit', onExit);
    });
  const { port } = await next<{ port: number }>('ready');
  const priority = lowestPriority(proc.pid!);
  return {
    /** How it is scheduled: SCHED_IDLE, or nice 19 where chrt is missing. */
    priority,
    /** The port its receivers listen on. */
    port,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    run(base: string, o: { until: number; parts: HostilePart[] }): Promise<HostileRun> {
      const done = next<HostileRun>('done');
      proc.send({ type: 'run', base, ...o });
      return done;
    },
    /** Attempts still open at its dripping and hanging receivers. */
    async open(): Promise<number> {
      const got = next<{ drip: number; hang: number }>('open');
      proc.send({ type: 'open' });
      const o = await got;
      return o.drip + o.hang;
    },
    close: () =>
      new Promise<void>((r) => {
        if (proc.exitCode !== null) return r();
        proc.once('exit', () => r());
        proc.kill();
      }),
  };
}
