// Model-server adapters: (1) adapter overhead, a render of a Cog model through the API (create, the
// worker's claim, the Cog adapter's synchronous prediction of 2 s, a 1 MiB data-URL output stored, then polled
// every 10 ms until succeeded) against the same prediction sent straight to the fake Cog server and its
// output decoded, median of several, the two interleaved; target ≤ 1.05× plus 10 ms. (2) dispatch to a
// pool: 24 renders created at once for a model on two fake Cog servers taking one render each (250 ms
// a render, polled every 25 ms), the time until all have succeeded against the same renders sent straight
// to the two servers (one after another on each, both at once), and how long a server sat idle between
// two renders (the dispatch latency: the result stored, the slot freed, the next render claimed and
// sent). The row passes when no server ever had two renders at once; the ratio is for information.
// The fakes speak Cog's protocol (test/fakes/cog.ts) in this process, on loopback.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { cogFake, type CogFake } from '../test/fakes/cog.ts';
import type { BenchContext } from './lib/context.ts';
import type { Result } from './lib/report.ts';
import {
  call,
  makeAccount,
  nextIdempotencyKey,
  startRendergate,
  type Service,
} from './lib/service.ts';
import { median, round } from './lib/stats.ts';

// A short render for a GPU model (they take seconds to minutes): the fixed costs weigh the most here.
const RENDER_MS = 2000;
const POOL_RENDER_MS = 250;
const POLL_MS = 10;

const model = (id: string, backend: Record<string, unknown>) => ({
  id,
  name: id,
  kind: 'video',
  description: 'A Cog model.',
  output: { type: 'file', contentType: 'video/mp4' },
  fields: [{ name: 'prompt', type: 'text', required: true }],
  price: '1',
  backend,
  timeLimitSeconds: 120,
  maxAttempts: 3,
});

async function direct(cog: CogFake): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${cog.base}/predictions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: crypto.randomUUID(), input: { prompt: 'direct' } }),
  });
  const p = (await res.json()) as { output: string };
  const bytes = Buffer.from(p.output.slice(p.output.indexOf(',') + 1), 'base64');
  if (bytes.length !== cog.output.length) throw new Error('direct: wrong output');
  return performance.now() - t0;
}

async function viaApi(
  svc: Service,
  key: string,
  modelId: string,
): Promise<{ id: string; ms: number }> {
  const t0 = performance.now();
  const created = await call(svc.base, 'POST', '/v1/generations', {
    key,
    body: { modelId, inputs: { prompt: 'via the API' } },
    headers: { 'idempotency-key': nextIdempotencyKey() },
  });
  if (created.status !== 202) throw new Error(`create -> ${created.status} ${created.text}`);
  return { id: created.json.id, ms: await waitSucceeded(svc, key, created.json.id, t0) };
}

async function waitSucceeded(
  svc: Service,
  key: string,
  id: string,
  t0: number,
  pollMs = POLL_MS,
): Promise<number> {
  for (;;) {
    const g = await call(svc.base, 'GET', `/v1/generations/${id}`, { key });
    if (g.json?.status === 'succeeded') return performance.now() - t0;
    if (g.json?.status !== 'queued')
      throw new Error(`render ended ${g.json?.status}: ${JSON.stringify(g.json?.error)}`);
    if (performance.now() - t0 > 120_000) throw new Error('no result via the API');
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

export async function run(ctx: BenchContext): Promise<Result[]> {
  const single = await cogFake({ output: crypto.randomBytes(1024 * 1024), delayMs: RENDER_MS });
  const pool = [
    await cogFake({ delayMs: POOL_RENDER_MS }),
    await cogFake({ delayMs: POOL_RENDER_MS }),
  ];
  const catalog = path.join(ctx.tmp, 'backends-catalog.yaml');
  fs.writeFileSync(
    catalog,
    stringify({
      models: [
        model('bench/cog', { driver: 'cog', url: single.base }),
        model('bench/pool', { driver: 'cog', urls: pool.map((p) => p.base), concurrencyPerUrl: 1 }),
      ],
    }),
  );
  const svc = await startRendergate(ctx, await ctx.pg.createDatabase('bench_backends'), {
    role: 'serve',
    env: { RENDERGATE_CATALOG: catalog, RENDERGATE_WORKER_CONCURRENCY: '4', LOG_LEVEL: 'warn' },
  });
  const results: Result[] = [];
  try {
    const acct = await makeAccount(svc.base);
    // (1) overhead
    const runs = ctx.quick ? 3 : 7;
    const d: number[] = [];
    const a: number[] = [];
    await viaApi(svc, acct.key, 'bench/cog'); // warm-up: connections, prepared statements
    await direct(single);
    for (let i = 0; i < runs; i++) {
      if (i % 2 === 0) {
        d.push(await direct(single));
        a.push((await viaApi(svc, acct.key, 'bench/cog')).ms);
      } else {
        a.push((await viaApi(svc, acct.key, 'bench/cog')).ms);
        d.push(await direct(single));
      }
    }
    const md = median(d)!;
    const ma = median(a)!;
    const limit = md * 1.05 + 10;
    ctx.log(
      `  backends cog: API ${ma.toFixed(0)} ms, direct ${md.toFixed(0)} ms (limit ${limit.toFixed(0)} ms)`,
    );
    results.push({
      scenario: 'backends',
      variant: 'cog render via API',
      concurrency: 1,
      rps: null,
      p50: round(ma, 1),
      p99: null,
      baseline: { name: 'direct to Cog', ms: round(md, 1) },
      ratio: round(ma / md, 3),
      target: '≤1.05×+10ms',
      pass: ma <= limit,
      extra: {
        apiMs: a.map((x) => round(x, 1)),
        directMs: d.map((x) => round(x, 1)),
        outputBytes: single.output.length,
        pollMs: POLL_MS,
      },
    });

    // (2) a pool of two servers, one render each at a time; the baseline is the same renders sent
    // straight to the two servers, one after another on each, both servers at once.
    const n = ctx.quick ? 12 : 24;
    const b0 = performance.now();
    await Promise.all(
      pool.map(async (p) => {
        for (let i = 0; i < n / pool.length; i++) await direct(p);
      }),
    );
    const ideal = performance.now() - b0;
    for (const p of pool) {
      p.maxInFlight = 0;
      p.predictions.length = 0;
    }
    const t0 = performance.now();
    const ids = await Promise.all(
      Array.from({ length: n }, async () => {
        const r = await call(svc.base, 'POST', '/v1/generations', {
          key: acct.key,
          body: { modelId: 'bench/pool', inputs: { prompt: 'pool' } },
          headers: { 'idempotency-key': nextIdempotencyKey() },
        });
        if (r.status !== 202) throw new Error(`create -> ${r.status} ${r.text}`);
        return r.json.id;
      }),
    );
    await Promise.all(ids.map((id) => waitSucceeded(svc, acct.key, id, t0, 25)));
    const total = performance.now() - t0;
    const overlapped = pool.map((p) => p.maxInFlight);
    // Dispatch latency: how long a server sat idle between the end of one render and the next one's start.
    const gaps = pool.flatMap((p) =>
      p.predictions.slice(1).map((x, i) => x.startedAt - (p.predictions[i].endedAt ?? x.startedAt)),
    );
    ctx.log(
      `  backends pool: ${n} renders in ${total.toFixed(0)} ms, direct ${ideal.toFixed(0)} ms; max at once per server ${overlapped.join(',')}; idle gaps ${gaps.map((g) => g.toFixed(0)).join(',')} ms`,
    );
    results.push({
      scenario: 'backends',
      variant: `pool of 2 Cog, ${n} renders`,
      concurrency: n,
      rps: round((n / total) * 1000, 1),
      p50: round(total, 1),
      p99: null,
      baseline: { name: 'direct to both', ms: round(ideal, 1) },
      ratio: round(total / ideal, 3),
      target: '1 per server',
      pass: overlapped.every((m) => m === 1),
      extra: {
        renderMs: POOL_RENDER_MS,
        perServer: pool.map((p) => p.predictions.length),
        maxInFlight: overlapped,
        idleGapMedianMs: round(median(gaps), 1),
        idleGapMaxMs: round(Math.max(...gaps), 1),
      },
    });
    return results;
  } finally {
    await svc.stop();
    await single.close();
    await Promise.all(pool.map((p) => p.close()));
  }
}
