// Webhook delivery. A worker process (dispatcher on, renders off) on a benchmark database; generations of
// an account with one endpoint are finished by database UPDATEs as a worker would finish them, and the
// outbox trigger, the NOTIFY and the dispatcher take it from there to a loopback receiver answering 204.
// Latency: the UPDATE's commit to the receiver's arrival (one change at a time). Throughput: a burst of
// changes committed at once, until every delivery arrived. Baselines: a bare node:http POST of the same
// body to the same receiver, one at a time (latency) and 16 at a time (throughput): the floor of any sender.
import http from 'node:http';
import pg from 'pg';
import type { BenchContext } from './lib/context.ts';
import type { Result } from './lib/report.ts';
import { startRendergate } from './lib/service.ts';
import { percentile, round } from './lib/stats.ts';

const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;

function post(url: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume().on('end', () => resolve());
      },
    );
    req.on('error', reject).end(body);
  });
}

export async function run(ctx: BenchContext): Promise<Result[]> {
  const arrivals = new Map<string, number>();
  let waiter: (() => void) | null = null;
  const receiver = http.createServer((req, res) => {
    let raw = '';
    req
      .setEncoding('utf8')
      .on('data', (d) => {
        raw += d;
      })
      .on('end', () => {
        const at = performance.now();
        try {
          arrivals.set((JSON.parse(raw) as { data?: { id?: string } }).data?.id ?? '', at);
        } catch {
          /* the baseline's body */
        }
        res.writeHead(204).end();
        waiter?.();
      });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const target = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  const url = await ctx.pg.createDatabase('bench_webhooks');
  const svc = await startRendergate(ctx, url, {
    role: 'worker',
    env: { RENDERGATE_WORKER_CONCURRENCY: '0', RENDERGATE_ALLOW_PRIVATE_URLS: '1' },
  });
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const until = async (check: () => boolean, ms = 60_000) => {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) throw new Error('deliveries did not arrive');
      await new Promise<void>((r) => {
        waiter = r;
        setTimeout(r, 50);
      });
    }
  };
  try {
    await db.query(`INSERT INTO accounts (id, email) VALUES ('acct_bench', 'bench@bench.test')`);
    await db.query(
      `INSERT INTO webhook_endpoints (id, account_id, url, events, secret) VALUES ('whe_bench', 'acct_bench', $1, '{generation.succeeded}', $2)`,
      [target, SECRET],
    );
    let n = 0;
    const make = async (count: number) => {
      const ids = Array.from(
        { length: count },
        () => `gen_${(++n).toString(16).padStart(32, '0')}`,
      );
      await db.query(
        `INSERT INTO generations (id, account_id, model_id, inputs, cost_cents, deadline_at)
        SELECT id, 'acct_bench', 'rendergate/shot-list', '{"text":"x"}', 0, now() + interval '1 hour' FROM unnest($1::text[]) id`,
        [ids],
      );
      return ids;
    };
    const finish = (ids: string[]) =>
      db.query(
        `UPDATE generations SET status = 'succeeded', text_output = 'done', completed_at = now() WHERE id = ANY ($1)`,
        [ids],
      );

    // latency, one change at a time
    const samples = ctx.quick ? 100 : 400;
    const latency: number[] = [];
    for (const id of await make(samples)) {
      await finish([id]);
      const committed = performance.now();
      await until(() => arrivals.has(id));
      latency.push(Math.max(0, arrivals.get(id)! - committed));
    }
    const body = JSON.stringify({
      type: 'generation.succeeded',
      timestamp: new Date().toISOString(),
      data: { id: 'x', padding: 'x'.repeat(400) },
    });
    const bare: number[] = [];
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      await post(target, body);
      bare.push(performance.now() - t0);
    }

    // throughput: a burst committed at once
    const burst = await make(ctx.quick ? 1000 : 4000);
    const t0 = performance.now();
    await finish(burst);
    await until(() => burst.every((id) => arrivals.has(id)), 120_000);
    const rps = burst.length / ((performance.now() - t0) / 1000);
    const b0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next++ < burst.length) await post(target, body);
      }),
    );
    const bareRps = burst.length / ((performance.now() - b0) / 1000);

    const p50 = round(percentile(latency, 50), 2);
    return [
      {
        scenario: 'webhooks',
        variant: 'change → receiver',
        concurrency: 1,
        rps: null,
        p50,
        p99: round(percentile(latency, 99), 2),
        baseline: {
          name: 'bare POST',
          p50: round(percentile(bare, 50), 2),
          p99: round(percentile(bare, 99), 2),
        },
        ratio: p50 !== null ? round(p50 / (percentile(bare, 50) || 1), 2) : null,
        target: '-',
        pass: null,
        extra: { samples },
      },
      {
        scenario: 'webhooks',
        variant: `burst of ${burst.length} changes`,
        concurrency: 16,
        rps: round(rps, 0),
        p50: null,
        p99: null,
        baseline: { name: 'bare POST ×16', rps: round(bareRps, 0) },
        ratio: round(rps / bareRps, 2),
        target: '-',
        pass: null,
      },
    ];
  } finally {
    await db.end();
    await svc.stop();
    receiver.closeAllConnections();
    await new Promise<void>((r) => receiver.close(() => r()));
  }
}
