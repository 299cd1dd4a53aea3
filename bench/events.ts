// Live events of a render (GET /v1/generations/{id}/events, one API process, role `api`).
// Latency: 20 streams at a time, each render then changed by a database UPDATE as a worker on
// another machine would; the time from the UPDATE's commit to the event's arrival on its stream,
// p50/p99, beside one plain poll's round trip (the least a polling client needs to see a change).
// Memory: the API process's resident memory before and with 1,000 streams open (1,000 renders, each
// stream past its first event), and the streams all given back once their clients close.
import http from 'node:http';
import pg from 'pg';
import type { BenchContext } from './lib/context.ts';
import type { Result } from './lib/report.ts';
import {
  call,
  IMAGE_TO_VIDEO,
  makeAccount,
  nextIdempotencyKey,
  startRendergate,
} from './lib/service.ts';
import { percentile, round } from './lib/stats.ts';

const OPEN = 1_000;

interface Stream {
  /** performance.now() of each event's arrival, and its data. */
  events: Array<{ at: number; data: string }>;
  /** Resolves once `n` events have arrived (woken by the arrival: no loop spins meanwhile). */
  reached: (n: number) => Promise<void>;
  close: () => void;
}

function open(agent: http.Agent, base: string, id: string, key: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${base}/v1/generations/${id}/events`,
      { agent, headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`events -> ${res.statusCode}`));
        const wanted: Array<{ n: number; wake: () => void }> = [];
        const s: Stream = {
          events: [],
          reached: (n) =>
            s.events.length >= n
              ? Promise.resolve()
              : new Promise((wake) => wanted.push({ n, wake })),
          close: () => req.destroy(),
        };
        let buf = '';
        res.setEncoding('utf8').on('data', (d: string) => {
          buf += d;
          for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
            const data = /^data: (.*)$/m.exec(buf.slice(0, i))?.[1];
            buf = buf.slice(i + 2);
            if (data) s.events.push({ at: performance.now(), data });
            for (const w of wanted.filter((x) => x.n <= s.events.length)) {
              wanted.splice(wanted.indexOf(w), 1);
              w.wake();
            }
          }
        });
        res.on('error', () => undefined);
        resolve(s);
      },
    );
    req.on('error', (e) => (e.message === 'socket hang up' ? undefined : reject(e)));
  });
}

async function until(what: string, probe: () => boolean | Promise<boolean>, ms = 60_000) {
  for (const end = Date.now() + ms; !(await probe());) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function run(ctx: BenchContext): Promise<Result[]> {
  const url = await ctx.pg.createDatabase('bench_events');
  // a tenth of the process's streams per account: room for the 1,000 of one account
  const svc = await startRendergate(ctx, url, {
    role: 'api',
    env: { RENDERGATE_MAX_WAITERS: String(OPEN * 10) },
  });
  const agent = new http.Agent({ keepAlive: false, maxSockets: OPEN * 2 });
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const acct = await makeAccount(svc.base);
    const create = async () => {
      const c = await call(svc.base, 'POST', '/v1/generations', {
        key: acct.key,
        body: IMAGE_TO_VIDEO,
        headers: { 'idempotency-key': nextIdempotencyKey() },
      });
      if (c.status !== 202) throw new Error(`create -> ${c.status} ${c.text}`);
      return c.json.id;
    };
    const streamsOpen = async () =>
      Number(
        /^rendergate_event_streams (\d+)$/m.exec(
          (await call(svc.base, 'GET', '/metrics')).text,
        )?.[1],
      );
    const rounds = ctx.quick ? 5 : 20;
    const perRound = 20;
    const lat: number[] = [];
    const polls: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const ids: string[] = [];
      for (let i = 0; i < perRound; i++) ids.push(await create());
      for (const id of ids) {
        const t0 = performance.now();
        const p = await call(svc.base, 'GET', `/v1/generations/${id}`, { key: acct.key });
        if (p.status !== 200) throw new Error(`poll -> ${p.status}`);
        polls.push(performance.now() - t0);
      }
      const streams = await Promise.all(ids.map((id) => open(agent, svc.base, id, acct.key)));
      await Promise.all(streams.map((s) => s.reached(1)));
      for (const [i, id] of ids.entries()) {
        await db.query(
          `UPDATE generations SET status = 'succeeded', text_output = 'done', started_at = now(),
             completed_at = now() WHERE id = $1`,
          [id],
        );
        const committed = performance.now();
        const s = streams[i];
        await s.reached(2);
        if (!s.events[1].data.includes('"succeeded"')) throw new Error('not the final state');
        lat.push(Math.max(0, s.events[1].at - committed));
      }
      for (const s of streams) s.close();
    }
    // Memory of 1,000 open streams (the process's RSS with them, less its RSS before).
    const ids: string[] = [];
    for (let i = 0; i < OPEN; i++) ids.push(await create());
    await until('no stream open', async () => (await streamsOpen()) === 0);
    const before = await svc.child.call<number>({ type: 'rss' });
    const streams: Stream[] = [];
    for (let i = 0; i < OPEN; i += 100)
      streams.push(
        ...(await Promise.all(
          ids.slice(i, i + 100).map((id) => open(agent, svc.base, id, acct.key)),
        )),
      );
    await Promise.all(streams.map((s) => s.reached(1)));
    const held = await streamsOpen();
    const after = await svc.child.call<number>({ type: 'rss' });
    const mb = round((after - before) / 2 ** 20, 1)!;
    for (const s of streams) s.close();
    await until('every stream given back', async () => (await streamsOpen()) === 0);
    const p50 = round(percentile(lat, 50), 2);
    const p99 = round(percentile(lat, 99), 2);
    const base50 = round(percentile(polls, 50), 2);
    return [
      {
        scenario: 'events',
        variant: 'event stream, change → event',
        concurrency: `${perRound} streams`,
        rps: null,
        p50,
        p99,
        baseline: {
          name: 'one poll round trip',
          p50: base50,
          p99: round(percentile(polls, 99), 2),
        },
        ratio: p50 !== null && base50 ? round(p50 / base50, 2) : null,
        target: 'p99≤20ms',
        pass: p99 !== null && p99 <= 20,
        extra: { samples: lat.length },
      },
      {
        scenario: 'events',
        variant: `${OPEN} open streams, memory`,
        concurrency: `${held} streams`,
        rps: null,
        p50: null,
        p99: null,
        baseline: { name: 'RSS before', mb: round(before / 2 ** 20, 1) },
        ratio: null,
        target: '≤50MB',
        pass: held === OPEN && mb <= 50,
        extra: { mb, streams: held },
      },
    ];
  } finally {
    agent.destroy();
    await db.end();
    await svc.stop();
  }
}
