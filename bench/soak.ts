// Soak: a hostile account beside a well-behaved one (docs/api.md "Abuse limits"). One `serve` process
// (API, worker and webhook dispatcher) on a benchmark database; the well-behaved account renders one
// shot list at a time, polls it to its end and receives its webhook at a loopback receiver. The same
// run is made twice, without and then with the hostile account, which meanwhile points nine webhook
// endpoints at receivers that drip their answer forever or never answer (test/helpers/
// hostile-receiver.ts), renders to feed them, floods uploads of noise images, and floods the studio's
// sign-in with wrong passwords. Figures: the well-behaved account's render, delivery and poll p99,
// each as a ratio to the run without the hostile account (target <= 1.5x), and the server's open file
// descriptors and resident memory before, at the end of the load, and once its attempts have drained.
// Seconds per side: RENDERGATE_BENCH_SOAK_SECONDS (default 75; 10 with --quick).
import crypto from 'node:crypto';
import fs from 'node:fs';
import sharp from 'sharp';
import type { BenchContext } from './lib/context.ts';
import type { Result } from './lib/report.ts';
import { call, makeAccount, startRendergate, type Answer, type Service } from './lib/service.ts';
import { percentile, round } from './lib/stats.ts';
import { hostileReceiver } from '../test/helpers/hostile-receiver.ts';
import { waitFor } from '../test/helpers/wait.ts';

type Receiver = Awaited<ReturnType<typeof hostileReceiver>>;
interface Side {
  render: number[];
  delivery: number[];
  poll: number[];
  uploads: number;
  signins: number;
  hostileRenders: number;
}

const TEXT = {
  modelId: 'rendergate/shot-list',
  inputs: { text: 'A gull lands on the pier. The tide turns. Night falls.' },
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function procStats(pid: number): { fds: number; rssMb: number; kinds: string } {
  const links = fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {
    try {
      return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      return 'gone';
    }
  });
  const count = new Map<string, number>();
  for (const l of links) {
    const kind = /^(socket|pipe|anon_inode)/.exec(l)?.[1] ?? 'file';
    count.set(kind, (count.get(kind) ?? 0) + 1);
  }
  const rss = Number(
    /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1],
  );
  return {
    fds: links.length,
    rssMb: Math.round(rss / 1024),
    kinds: [...count].map(([k, n]) => `${k} ${n}`).join(', '),
  };
}

async function endpoint(base: string, key: string, url: string): Promise<string> {
  const r = await call(base, 'POST', '/v1/webhook-endpoints', { key, body: { url } });
  if (r.status !== 201) throw new Error(`endpoint -> ${r.status} ${r.text}`);
  return r.json.id;
}

/** The well-behaved account's loop: create, poll to the end, wait for its webhook. */
async function wellBehaved(svc: Service, key: string, rx: Receiver, until: number, side: Side) {
  while (Date.now() < until) {
    const t0 = performance.now();
    const g = await call(svc.base, 'POST', '/v1/generations', {
      key,
      body: TEXT,
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    if (g.status !== 202) throw new Error(`create -> ${g.status} ${g.text}`);
    let final: Answer;
    for (;;) {
      const p0 = performance.now();
      const r = await call(svc.base, 'GET', `/v1/generations/${g.json.id}`, { key });
      side.poll.push(performance.now() - p0);
      if (r.json?.status && r.json.status !== 'queued') {
        final = r.json;
        break;
      }
      await sleep(20);
    }
    side.render.push(performance.now() - t0);
    await waitFor(
      'the delivery',
      () =>
        rx.received.some((x) => x.generationId === g.json.id && x.type === 'generation.succeeded'),
      { timeoutMs: 60_000 },
    );
    const got = rx.received.find(
      (x) => x.generationId === g.json.id && x.type === 'generation.succeeded',
    )!;
    side.delivery.push(Math.max(0, got.at - Date.parse(final.completedAt ?? '')));
  }
}

/** The hostile account: renders feeding hanging and dripping endpoints, uploads, wrong passwords. */
async function hostile(svc: Service, rx: Receiver, until: number, side: Side) {
  const h = await makeAccount(svc.base);
  const email = (await call(svc.base, 'GET', '/v1/me', { key: h.key })).json?.email;
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await endpoint(svc.base, h.key, rx.url(`/drip/${i}`)));
  for (let i = 0; i < 4; i++) ids.push(await endpoint(svc.base, h.key, rx.url(`/hang/${i}`)));
  const noise = await sharp(crypto.randomBytes(200 * 200 * 3), {
    raw: { width: 200, height: 200, channels: 3 },
  })
    .png()
    .toBuffer();
  const renders = async () => {
    while (Date.now() < until) {
      const r = await call(svc.base, 'POST', '/v1/generations', {
        key: h.key,
        body: TEXT,
        headers: { 'idempotency-key': crypto.randomUUID() },
      });
      if (r.status === 202) side.hostileRenders++;
      await sleep(r.status === 202 ? 200 : 1000);
    }
  };
  const uploads = async () => {
    while (Date.now() < until) {
      const r = await fetch(`${svc.base}/v1/uploads`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.key}`, 'content-type': 'image/png' },
        body: new Uint8Array(noise),
      });
      await r.arrayBuffer();
      side.uploads++;
    }
  };
  const signins = async () => {
    while (Date.now() < until) {
      const form = await fetch(`${svc.base}/signin`);
      const cookie = form.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
      const r = await fetch(`${svc.base}/signin`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: svc.base, cookie },
        body: new URLSearchParams({
          _csrf: token,
          email: email ?? 'nobody@bench.test',
          password: `wrong ${side.signins}`,
        }),
      });
      await r.arrayBuffer();
      side.signins++;
    }
  };
  await Promise.all([renders(), renders(), uploads(), uploads(), signins(), signins()]);
  // the attacker leaves: its endpoints go, so no new attempt starts; those under way end within 15 s
  for (const id of ids)
    await call(svc.base, 'DELETE', `/v1/webhook-endpoints/${id}`, { key: h.key });
}

async function runSide(ctx: BenchContext, name: string, withHostile: boolean, seconds: number) {
  const rx = await hostileReceiver();
  const svc = await startRendergate(ctx, await ctx.pg.createDatabase(`bench_soak_${name}`), {
    role: 'serve',
    env: { RENDERGATE_ALLOW_PRIVATE_URLS: '1', RENDERGATE_WEBHOOK_RETRY_SECONDS: '5,10,20' },
  });
  const side: Side = {
    render: [],
    delivery: [],
    poll: [],
    uploads: 0,
    signins: 0,
    hostileRenders: 0,
  };
  try {
    const good = await makeAccount(svc.base);
    await endpoint(svc.base, good.key, rx.url('/ok/good'));
    await wellBehaved(svc, good.key, rx, Date.now() + 3_000, {
      ...side,
      render: [],
      delivery: [],
      poll: [],
    }); // warm-up
    const before = procStats(svc.child.pid);
    const until = Date.now() + seconds * 1000;
    await Promise.all([
      wellBehaved(svc, good.key, rx, until, side),
      withHostile ? hostile(svc, rx, until, side) : Promise.resolve(),
    ]);
    const atEnd = procStats(svc.child.pid);
    // drained: every attempt is bounded by 15 s; wait for the receiver's connections to close, then
    // past the database pools' 30 s idle timeout, so connections opened for the load are closed too
    await waitFor('attempts drained', () => rx.open('drip') === 0 && rx.open('hang') === 0, {
      timeoutMs: 60_000,
    }).catch(() => undefined);
    await sleep(35_000);
    const drained = procStats(svc.child.pid);
    ctx.log(
      `soak ${name}: ${side.render.length} renders, hostile ${side.hostileRenders} renders, ${side.uploads} uploads, ` +
        `${side.signins} wrong passwords; fds ${before.fds} (${before.kinds}) -> ${atEnd.fds} -> ${drained.fds} ` +
        `(${drained.kinds}); RSS ${before.rssMb} -> ${atEnd.rssMb} -> ${drained.rssMb} MB`,
    );
    return { side, before, atEnd, drained };
  } finally {
    await svc.stop();
    await rx.close();
  }
}

export async function run(ctx: BenchContext): Promise<Result[]> {
  const seconds = Number(process.env.RENDERGATE_BENCH_SOAK_SECONDS) || (ctx.quick ? 10 : 75);
  const calm = await runSide(ctx, 'calm', false, seconds);
  const rough = await runSide(ctx, 'hostile', true, seconds);
  const rows: Result[] = [];
  for (const [what, pick] of [
    ['render', (s: Side) => s.render],
    ['delivery', (s: Side) => s.delivery],
    ['poll', (s: Side) => s.poll],
  ] as const) {
    const base99 = percentile(pick(calm.side), 0.99);
    const p99 = percentile(pick(rough.side), 0.99);
    const ratio = base99 && p99 !== null ? round(p99 / Math.max(base99, 1)) : null;
    rows.push({
      scenario: 'soak',
      variant: `well-behaved ${what} beside a hostile account`,
      concurrency: `${seconds} s`,
      rps: null,
      p50: round(percentile(pick(rough.side), 0.5)),
      p99: round(p99),
      baseline: {
        name: 'no hostile account',
        p50: round(percentile(pick(calm.side), 0.5)),
        p99: round(base99),
      },
      ratio,
      target: '<= 1.5x p99',
      pass: ratio === null ? null : ratio <= 1.5,
      extra: { samples: pick(rough.side).length, baselineSamples: pick(calm.side).length },
    });
  }
  const fdsFlat = rough.drained.fds <= rough.before.fds + 10;
  const rssFlat = rough.drained.rssMb <= rough.before.rssMb * 1.5 + 50;
  rows.push({
    scenario: 'soak',
    variant: 'server open fds: before, end of load, drained',
    concurrency: `${seconds} s`,
    rps: null,
    p50: rough.atEnd.fds,
    p99: rough.drained.fds,
    baseline: { name: 'before the load', ms: rough.before.fds },
    ratio: null,
    target: 'flat (+10)',
    pass: fdsFlat,
    extra: { before: rough.before.fds, atEnd: rough.atEnd.fds, drained: rough.drained.fds },
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
    },
  });
  return rows;
}
