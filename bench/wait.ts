// Prefer: wait. Held GET /v1/generations/{id} requests (20 at a time, one API process, role `api`), each
// generation then finished by a database UPDATE as a worker on another machine would: the time from the
// UPDATE's commit to the held answer's arrival, p50/p99. Baseline: the round trip of one plain poll of
// the same generation, the least a polling client needs to see the change even if it polled at the
// very instant of it (and a client polling every second waits half a second on average).
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

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function get(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; at: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(base + path, { agent, headers }, (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (d) => {
            body += d;
          })
          .on('end', () => resolve({ status: res.statusCode!, at: performance.now(), body }));
      })
      .on('error', reject);
  });
}

export async function run(ctx: BenchContext): Promise<Result[]> {
  const url = await ctx.pg.createDatabase('bench_wait');
  const svc = await startRendergate(ctx, url, { role: 'api' });
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const acct = await makeAccount(svc.base);
    const auth = { authorization: `Bearer ${acct.key}` };
    const held = async () =>
      Number(
        /^rendergate_held_requests (\d+)$/m.exec(
          (await call(svc.base, 'GET', '/metrics')).text,
        )?.[1] ?? -1,
      );
    const rounds = ctx.quick ? 10 : 40;
    const perRound = 20;
    const waits: number[] = [];
    const polls: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const ids: string[] = [];
      for (let i = 0; i < perRound; i++) {
        const c = await call(svc.base, 'POST', '/v1/generations', {
          key: acct.key,
          body: IMAGE_TO_VIDEO,
          headers: { 'idempotency-key': nextIdempotencyKey() },
        });
        if (c.status !== 202) throw new Error(`create -> ${c.status} ${c.text}`);
        ids.push(c.json.id);
      }
      // the baseline: one plain poll round trip each
      for (const id of ids) {
        const t0 = performance.now();
        const p = await get(svc.base, `/v1/generations/${id}`, auth);
        if (p.status !== 200) throw new Error(`poll -> ${p.status}`);
        polls.push(p.at - t0);
      }
      const answers = ids.map((id) =>
        get(svc.base, `/v1/generations/${id}`, { ...auth, prefer: 'wait=30' }),
      );
      for (let t = Date.now(); (await held()) < perRound;)
        if (Date.now() - t > 10_000) throw new Error('requests not held');
      for (const [i, id] of ids.entries()) {
        await db.query(
          `UPDATE generations SET status = 'succeeded', text_output = 'done', started_at = now(), completed_at = now() WHERE id = $1`,
          [id],
        );
        const committed = performance.now();
        const a = await answers[i];
        if (a.status !== 200 || !a.body.includes('"succeeded"'))
          throw new Error(`held answer ${a.status} ${a.body.slice(0, 200)}`);
        waits.push(Math.max(0, a.at - committed));
      }
    }
    const p50 = round(percentile(waits, 50), 2);
    const p99 = round(percentile(waits, 99), 2);
    const base50 = round(percentile(polls, 50), 2);
    return [
      {
        scenario: 'wait',
        variant: 'Prefer: wait, change → answer',
        concurrency: `${perRound} held`,
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
        extra: { samples: waits.length },
      },
    ];
  } finally {
    agent.destroy();
    await db.end();
    await svc.stop();
  }
}
