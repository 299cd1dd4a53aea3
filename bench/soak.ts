// Soak: a hostile account beside a well-behaved one (docs/api.md "Abuse limits"). One `serve` process
// (API, worker and webhook dispatcher) on a benchmark database; the well-behaved account runs two loops,
// each rendering one shot list at a time, polling it to its end and waiting for its webhook at a
// receiver in a process of its own (bench/lib/receiver-child.ts). The same run is made twice, without
// and then with the hostile account (bench/lib/soak-hostile.ts: hanging and dripping receivers fed by
// its renders, a flood of uploads, a flood of wrong passwords; RENDERGATE_BENCH_SOAK_HOSTILE=webhooks,
// uploads,signins runs only the parts named, to tell which one costs what). The hostile account runs
// in a process of its own at the lowest CPU priority (SCHED_IDLE, else nice 19: an attacker's CPU is
// not the server's); the log says so and gives the rates its floods reached and the CPU it used. Its
// floods loop on refusals from two connections each, so past their bursts they are answered late
// (docs/account-limits.md "Refusals that keep coming"): the rates show it.
// Figures: the well-behaved account's render, delivery and poll p99, each as a ratio to the run without
// the hostile account (target <= 1.5x). Delivery is exact to the microsecond: from the outbox row's
// created_at (clock_timestamp(), written by the trigger in the transaction that made the render final)
// to wallNow() in the receiver when the body arrived; both read the same system clock. Beside them the
// server's event-loop delay and the CPU the server and PostgreSQL used, and the server's open file
// descriptors by kind (bench/lib/fd-census.ts) before, at the end of the load, and once drained: past
// the idle timeouts (DRAIN_MS), or as soon as no kind is above its count before.
// Seconds per side: RENDERGATE_BENCH_SOAK_SECONDS (default 75; 10 with --quick). --profile profiles the
// server over each side's load.
import crypto from 'node:crypto';
import pg from 'pg';
import { profiled, type BenchContext } from './lib/context.ts';
import { cpuWindow, type CpuWindow } from './lib/cpu.ts';
import { fdCensus, fdDiff, type FdCensus } from './lib/fd-census.ts';
import type { Result } from './lib/report.ts';
import { startReceiver } from './lib/receiver.ts';
import { call, makeAccount, startRendergate, type Answer, type Service } from './lib/service.ts';
import {
  endpoint,
  HOSTILE_PARTS,
  noiseImage,
  SHOT_LIST,
  startHostile,
  upload,
  wrongPassword,
  type HostileCounts,
  type HostilePart,
} from './lib/soak-hostile.ts';
import { percentile, round } from './lib/stats.ts';
import { waitFor } from '../test/helpers/wait.ts';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
interface Side extends HostileCounts {
  render: number[];
  delivery: number[];
  poll: number[];
  /** When each render and poll started, ms since the load began (same order as render and poll). */
  renderAt: number[];
  pollAt: number[];
  deliveryAt: number[];
  /** Start of the load: performance.now() and the wall clock, ms. */
  t0: number;
  wall0: number;
  /** [generation id, receipt wallNow ms] of each well-behaved delivery. */
  receipts: Array<[string, number]>;
}
interface Eld {
  p50: number;
  p99: number;
  max: number;
  samples: number;
}

/** Well-behaved loops at once: twice the samples for the p99 in the same time. */
const LOOPS = 2;
/**
 * How long to wait for the count to come back: past the longest idle timeout of what a load opens, each
 * bounded by design: the server's keep-alive timeout for idle client connections (65 s, src/http/
 * server.ts), the text pool's idle threads (60 s, each with its event poll, eventfd and pipes), the
 * database pool's idle connections (30 s, at most 20). RENDERGATE_BENCH_SOAK_DRAIN_SECONDS=0 skips the
 * wait (a latency-only run).
 */
const DRAIN_MS = Number(process.env.RENDERGATE_BENCH_SOAK_DRAIN_SECONDS ?? 70) * 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const newSide = (): Side => ({
  render: [],
  delivery: [],
  poll: [],
  renderAt: [],
  pollAt: [],
  deliveryAt: [],
  t0: performance.now(),
  wall0: Date.now(),
  receipts: [],
  uploads: 0,
  signins: 0,
  hostileRenders: 0,
});

/** One well-behaved loop: create, poll to the end, wait for its webhook. */
async function wellBehaved(svc: Service, key: string, rx: Receiver, until: number, side: Side) {
  while (Date.now() < until) {
    const t0 = performance.now();
    const g = await call(svc.base, 'POST', '/v1/generations', {
      key,
      body: SHOT_LIST,
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    if (g.status !== 202) throw new Error(`create -> ${g.status} ${g.text}`);
    let final: Answer;
    for (;;) {
      const p0 = performance.now();
      const r = await call(svc.base, 'GET', `/v1/generations/${g.json.id}`, { key });
      side.poll.push(performance.now() - p0);
      side.pollAt.push(p0 - side.t0);
      if (r.json?.status && r.json.status !== 'queued') {
        final = r.json;
        break;
      }
      await sleep(20);
    }
    side.render.push(performance.now() - t0);
    side.renderAt.push(t0 - side.t0);
    if (final.status !== 'succeeded') throw new Error(`render -> ${final.status}`);
    const got = await rx.receipt(g.json.id, 'generation.succeeded', 60_000);
    side.receipts.push([g.json.id, got.at]);
  }
}

/**
 * The warm-up's visit to the paths the attack will take, as any server in use has served them before:
 * a few uploads, the sign-in page and one wrong password. Both sides make it, so neither measures the
 * first call of a path in the life of its process (a template compiled, the image decoder and the
 * password hasher set up), only the attack.
 */
async function everyDoorOnce(svc: Service, key: string) {
  const image = await noiseImage();
  for (let i = 0; i < 3; i++) {
    const r = await upload(svc.base, key, image);
    if (r.status !== 201) throw new Error(`upload -> ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
  }
  const r = await wrongPassword(svc.base, 'warm@bench.test', 'not this');
  if (r.status !== 401) throw new Error(`sign-in -> ${r.status}`);
  await r.arrayBuffer();
}

/** Delivery latencies: each receipt minus its outbox row's created_at, read exactly (numeric epoch). */
async function deliveries(url: string, endpointId: string, side: Side): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ generation_id: string; at: string }>(
      `SELECT generation_id, (extract(epoch FROM created_at) * 1000)::text AS at
       FROM webhook_deliveries WHERE endpoint_id = $1 AND type = 'generation.succeeded'`,
      [endpointId],
    );
    const created = new Map(rows.map((r) => [r.generation_id, Number(r.at)]));
    for (const [id, at] of side.receipts) {
      const t = created.get(id);
      if (t === undefined) throw new Error(`no outbox row for ${id}`);
      side.delivery.push(at - t);
      side.deliveryAt.push(t - side.wall0);
    }
  } finally {
    await db.end();
  }
}

async function runSide(ctx: BenchContext, name: string, parts: HostilePart[], seconds: number) {
  const hostileRx = await startHostile();
  const rx = await startReceiver();
  const url = await ctx.pg.createDatabase(`bench_soak_${name}`);
  const svc = await startRendergate(ctx, url, {
    role: 'serve',
    env: { RENDERGATE_ALLOW_PRIVATE_URLS: '1', RENDERGATE_WEBHOOK_RETRY_SECONDS: '5,10,20' },
  });
  const census = (): FdCensus =>
    fdCensus(svc.child.pid, {
      serverPort: Number(new URL(svc.base).port),
      ports: {
        [Number(new URL(ctx.pg.url).port)]: 'postgres',
        [hostileRx.port]: 'hostile receivers',
        [Number(new URL(rx.url).port)]: 'the good receiver',
      },
    });
  const side = newSide();
  try {
    const good = await makeAccount(svc.base);
    const goodEndpoint = await endpoint(svc.base, good.key, rx.url);
    const warm = Date.now() + 3_000;
    await Promise.all([
      ...Array.from({ length: LOOPS }, () => wellBehaved(svc, good.key, rx, warm, newSide())),
      everyDoorOnce(svc, good.key),
    ]);
    const before = census();
    await svc.child.call({ type: 'eld-start' });
    const cpu = cpuWindow(svc.child.pid, ctx.pg.dataDir);
    side.t0 = performance.now();
    side.wall0 = Date.now();
    const until = side.wall0 + seconds * 1000;
    const [, attacker] = await profiled(ctx, svc.child, `soak-${name}`, () =>
      Promise.all([
        Promise.all(
          Array.from({ length: LOOPS }, () => wellBehaved(svc, good.key, rx, until, side)),
        ),
        parts.length ? hostileRx.run(svc.base, { until, parts }) : null,
      ]),
    );
    const used: CpuWindow = cpu();
    if (attacker) Object.assign(side, attacker.counts);
    const eld = await svc.child.call<Eld>({ type: 'eld-stop' });
    const atEnd = census();
    await deliveries(url, goodEndpoint, side);
    // drained: every attempt is bounded by 15 s, so the hostile receivers' connections close; then the
    // idle timeouts, unless the count is back before them
    const t0 = Date.now();
    await waitFor('attempts drained', async () => (await hostileRx.open()) === 0, {
      timeoutMs: 30_000,
    }).catch(() => undefined);
    let drained = census();
    // back when no kind is above its count before the load (fewer threads must not hide more sockets)
    const above = (c: FdCensus) =>
      Object.entries(c.kinds).some(([k, n]) => n > (before.kinds[k] ?? 0));
    while (above(drained) && Date.now() - t0 < DRAIN_MS) {
      await sleep(1_000);
      drained = census();
    }
    const drainS = Math.round((Date.now() - t0) / 1000);
    const s = (n: number) => round(n / (used.wallMs / 1000), 1);
    ctx.log(
      `soak ${name}: ${side.render.length} renders; ` +
        (attacker
          ? `hostile (own process, ${hostileRx.priority}, ${attacker.cpuMs} CPU ms): ` +
            `${side.hostileRenders} renders, ${side.uploads} uploads (${s(side.uploads)}/s), ` +
            `${side.signins} wrong passwords (${s(side.signins)}/s); `
          : '') +
        `server event-loop delay p50 ` +
        `${eld.p50} p99 ${eld.p99} max ${eld.max} ms; CPU over ${used.wallMs} ms: server ` +
        `${used.serverMs} ms, postgres ${used.postgresMs} ms, load generator ${used.loadGeneratorMs} ms`,
    );
    ctx.log(
      `soak ${name}: load began at ${side.wall0} (epoch ms); slowest 1% by ${WINDOW_S} s window: ` +
        slowest(side),
    );
    if (attacker?.counts.floodsAt)
      ctx.log(
        `soak ${name}: floods began ${attacker.counts.floodsAt - side.wall0} ms into the load; ` +
          `their answers in each of their first 10 s: ` +
          Object.entries(attacker.counts.firstSeconds ?? {})
            .map(([k, v]) => `${k} [${v.join(' ')}]`)
            .join(', '),
      );
    ctx.log(
      `soak ${name}: fds ${before.total} -> ${atEnd.total} -> ${drained.total} after ${drainS} s; ` +
        `threads ${before.threads} -> ${atEnd.threads} -> ${drained.threads}; RSS ${before.rssMb} -> ` +
        `${atEnd.rssMb} -> ${drained.rssMb} MB\n  end of load vs before: ${fdDiff(before, atEnd).join('; ')}` +
        `\n  drained vs before: ${fdDiff(before, drained).join('; ') || 'the same'}`,
    );
    return {
      side,
      before,
      atEnd,
      drained,
      drainS,
      eld,
      used,
      attacker,
      priority: hostileRx.priority,
    };
  } finally {
    await svc.stop();
    await rx.close();
    await hostileRx.close();
  }
}

const WINDOW_S = 10;
/**
 * Where in the load the slowest 1% of each measure fell: per measure, how many of them started in each
 * WINDOW_S window. A burst (say, the first seconds of a flood) shows as one crowded window, a steady
 * cost as an even spread.
 */
function slowest(side: Side): string {
  const parts: string[] = [];
  for (const [what, ms, at] of [
    ['render', side.render, side.renderAt],
    ['delivery', side.delivery, side.deliveryAt],
    ['poll', side.poll, side.pollAt],
  ] as const) {
    const p99 = percentile(ms, 99);
    if (p99 === null) continue;
    const counts: number[] = [];
    ms.forEach((v, i) => {
      if (v < p99) return;
      const w = Math.max(0, Math.floor(at[i] / 1000 / WINDOW_S));
      counts[w] = (counts[w] ?? 0) + 1;
    });
    // the first window again, by second: which of the load's first seconds the slowest fell in
    const first: number[] = Array<number>(WINDOW_S).fill(0);
    ms.forEach((v, i) => {
      if (v >= p99 && at[i] < WINDOW_S * 1000) first[Math.max(0, Math.floor(at[i] / 1000))]++;
    });
    parts.push(
      `${what} [${Array.from(counts, (n) => n ?? 0).join(' ')}] (first by second: ${first.join(' ')})`,
    );
  }
  return parts.join(', ');
}

function hostileParts(): HostilePart[] {
  const v = process.env.RENDERGATE_BENCH_SOAK_HOSTILE;
  if (!v) return HOSTILE_PARTS;
  const parts = v.split(',').map((s) => s.trim()) as HostilePart[];
  const bad = parts.filter((p) => !HOSTILE_PARTS.includes(p));
  if (bad.length) throw new Error(`RENDERGATE_BENCH_SOAK_HOSTILE: unknown ${bad.join(', ')}`);
  return parts;
}

export async function run(ctx: BenchContext): Promise<Result[]> {
  const seconds = Number(process.env.RENDERGATE_BENCH_SOAK_SECONDS) || (ctx.quick ? 10 : 75);
  const parts = hostileParts();
  const calm = await runSide(ctx, 'calm', [], seconds);
  const rough = await runSide(ctx, 'hostile', parts, seconds);
  const rows: Result[] = [];
  for (const [what, pick] of [
    ['render', (s: Side) => s.render],
    ['delivery', (s: Side) => s.delivery],
    ['poll', (s: Side) => s.poll],
  ] as const) {
    const base99 = percentile(pick(calm.side), 99);
    const p99 = percentile(pick(rough.side), 99);
    const ratio = base99 && p99 !== null ? round(p99 / base99) : null;
    rows.push({
      scenario: 'soak',
      variant: `well-behaved ${what} beside a hostile account`,
      concurrency: `${seconds} s`,
      rps: null,
      p50: round(percentile(pick(rough.side), 50), 3),
      p99: round(p99, 3),
      baseline: {
        name: 'no hostile account',
        p50: round(percentile(pick(calm.side), 50), 3),
        p99: round(base99, 3),
      },
      ratio,
      target: '<= 1.5x p99',
      pass: ratio === null ? null : ratio <= 1.5,
      extra: {
        samples: pick(rough.side).length,
        baselineSamples: pick(calm.side).length,
        p95: round(percentile(pick(rough.side), 95), 3),
        baselineP95: round(percentile(pick(calm.side), 95), 3),
        max: round(Math.max(...pick(rough.side)), 3),
        baselineMax: round(Math.max(...pick(calm.side)), 3),
        hostile: parts.join(','),
      },
    });
  }
  rows.push({
    scenario: 'soak',
    variant: 'server event-loop delay beside a hostile account',
    concurrency: `${seconds} s`,
    rps: null,
    p50: rough.eld.p50,
    p99: rough.eld.p99,
    baseline: { name: 'no hostile account', p50: calm.eld.p50, p99: calm.eld.p99 },
    ratio: null,
    target: 'diagnostic',
    pass: null,
    extra: {
      max: rough.eld.max,
      baselineMax: calm.eld.max,
      cpu: rough.used,
      baselineCpu: calm.used,
      hostileProcess: rough.attacker
        ? { priority: rough.priority, cpuMs: rough.attacker.cpuMs }
        : null,
    },
  });
  const fdsFlat = rough.drained.total <= rough.before.total + 10;
  const rssFlat = rough.drained.rssMb <= rough.before.rssMb * 1.5 + 50;
  rows.push({
    scenario: 'soak',
    variant: 'server open fds: before, end of load, drained',
    concurrency: `${seconds} s`,
    rps: null,
    p50: rough.atEnd.total,
    p99: rough.drained.total,
    baseline: { name: 'before the load', ms: rough.before.total },
    ratio: null,
    target: 'flat (+10)',
    pass: fdsFlat,
    extra: {
      drainedAfterS: rough.drainS,
      atEndVsBefore: fdDiff(rough.before, rough.atEnd),
      drainedVsBefore: fdDiff(rough.before, rough.drained),
      threads: [rough.before.threads, rough.atEnd.threads, rough.drained.threads],
    },
  });
  rows.push({
    scenario: 'soak',
    variant: 'server RSS MB: before, end of load, drained',
    concurrency: `${seconds} s`,
    rps: null,
    p50: rough.atEnd.rssMb,
    p99: rough.drained.rssMb,
    baseline: { name: 'before the load', mb: rough.before.rssMb },
    ratio: null,
    target: 'flat (1.5x + 50 MB)',
    pass: rssFlat,
    extra: {
      uploads: rough.side.uploads,
      wrongPasswords: rough.side.signins,
      hostileRenders: rough.side.hostileRenders,
      uploadsPerS: round(rough.side.uploads / seconds, 1),
      wrongPasswordsPerS: round(rough.side.signins / seconds, 1),
    },
  });
  return rows;
}
