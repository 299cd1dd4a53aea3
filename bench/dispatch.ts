// Dispatch: how long from a create's commit until its renderer starts, and how fast a worker drains a
// backlog. The shot-list renderer is replaced (extraBackends, in the server child only) by an instant
// backend that records the wall-clock time run() was entered.
//
// Commit time, honestly: this scenario runs on its own PostgreSQL with track_commit_timestamp on, and
// reads pg_xact_commit_timestamp(xmin) of the create's idempotency_keys row, which is written in the
// create's transaction and never updated. That is the time the commit record was written; the
// NOTIFY that wakes the worker is sent once the commit is acknowledged (src/queue/notify-after-commit.ts), so the WAL
// flush is part of the figure, as it is of any commit. The backend's start is read in the server child
// from the same system clock (aligned to Date.now() ticks, sub-millisecond). latency = start - commit:
// the wake-up and its delivery, the worker's claim, and the event loop's backlog.
//
// Creates are sent at a steady rate, open loop (create i at t0 + i/rate, answered or not), so that the
// figure is one create's wait for its renderer. autocannon's overallRate cannot do that: each of its
// connections sends its whole quota for the second at the start of the second, so "20/s" was a burst
// of 20 creates every second and measured how fast two worker slots work off a burst (~2 ms a job, so
// the median job waited ~20 ms behind the others). Working off a backlog is what the drain measures.
//
// Drain: 10,000 queued jobs over 10 accounts written in one transaction (with the NOTIFY a create
// sends), to a worker-role process that is already up; rate = jobs / (last completed_at - commit).
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { JOBS_CHANNEL } from '../src/db/channels.ts';
import type { BenchContext } from './lib/context.ts';
import { profiled } from './lib/context.ts';
import { loadProblem, type LoadResult } from './lib/load.ts';
import { BenchPostgres } from './lib/pg.ts';
import type { Result } from './lib/report.ts';
import { makeAccount, nextIdempotencyKey, startRendergate } from './lib/service.ts';
import { wallNow } from './lib/clock.ts';
import { percentile, round } from './lib/stats.ts';

const DRAIN_LIMIT_S = 40;

const SHOT_LIST = {
  modelId: 'rendergate/shot-list',
  inputs: { text: 'A lighthouse at dusk. Waves break below. A gull lands.' },
};

/** Waits until nothing is queued; false when `timeoutMs` passed first. */
async function waitDrained(db: pg.Client, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM generations WHERE status = 'queued'`,
    );
    if (rows[0].n === 0) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * POSTs `body` to `url` at a steady `rate` for `durationS` seconds, open loop: each request leaves at its
 * due time whatever earlier ones are doing (over up to 32 keep-alive connections).
 */
async function paced(o: {
  url: string;
  rate: number;
  durationS: number;
  body: string;
  headers: () => Record<string, string>;
}): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  const send = () =>
    new Promise<void>((resolve) => {
      const t = performance.now();
      const req = http.request(
        o.url,
        {
          method: 'POST',
          agent,
          timeout: 30_000,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(o.body),
            ...o.headers(),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            statuses[status] = (statuses[status] ?? 0) + 1;
            if (status >= 200 && status < 300) {
              ok++;
              latencies.push(performance.now() - t);
            } else non2xx++;
            resolve();
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(o.body);
    });
  const inFlight: Array<Promise<void>> = [];
  const t0 = performance.now();
  for (let i = 0; i < o.rate * o.durationS; i++) {
    const wait = t0 + (i * 1000) / o.rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(send());
  }
  await Promise.all(inFlight);
  agent.destroy();
  const durationS = (performance.now() - t0) / 1000;
  return {
    rps: ok / durationS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ok,
    non2xx,
    errors,
    durationS,
    statuses,
  };
}

/**
 * The floor under any NOTIFY-woken dispatch: a listening pg connection's commit → notification latency,
 * measured the same way (commit timestamp of the row written with the NOTIFY → wall clock on receipt),
 * at the same rate, on the same database. It runs in this process, idle otherwise at that moment.
 */
async function notifyFloor(url: string, rate: number, durationS: number): Promise<number[]> {
  const listener = new pg.Client({ connectionString: url });
  const writer = new pg.Client({ connectionString: url });
  await Promise.all([listener.connect(), writer.connect()]);
  try {
    await writer.query(
      'CREATE TABLE IF NOT EXISTS bench_notify (id bigserial PRIMARY KEY, note text)',
    );
    const received = new Map<string, number>();
    listener.on('notification', (n) => {
      received.set(n.payload ?? '', wallNow());
    });
    await listener.query('LISTEN bench_notify');
    const t0 = performance.now();
    for (let i = 0; performance.now() - t0 < durationS * 1000; i++) {
      const due = t0 + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await writer.query('BEGIN');
      const {
        rows: [{ id }],
      } = await writer.query<{ id: string }>(
        `INSERT INTO bench_notify (note) VALUES ('job') RETURNING id::text`,
      );
      await writer.query(`SELECT pg_notify('bench_notify', $1)`, [id]);
      await writer.query('COMMIT');
    }
    await new Promise((r) => setTimeout(r, 200));
    const { rows } = await writer.query<{ id: string; commit_ms: number }>(
      `SELECT id::text, extract(epoch FROM pg_xact_commit_timestamp(xmin))::float8 * 1000 AS commit_ms FROM bench_notify WHERE id = ANY($1::bigint[])`,
      [[...received.keys()]],
    );
    await writer.query('TRUNCATE bench_notify');
    return rows.map((r) => received.get(r.id)! - r.commit_ms);
  } finally {
    await Promise.all([listener.end(), writer.end()]);
  }
}

export async function run(ctx: BenchContext): Promise<Result[]> {
  const pgd = await BenchPostgres.start(path.join(ctx.tmp, 'pg-dispatch'));
  try {
    await pgd.configure({
      track_commit_timestamp: 'on',
      ...(ctx.profile ? BenchPostgres.STATEMENT_STATS : {}),
    });
    const url = await pgd.createDatabase('bench_dispatch');
    const db = new pg.Client({ connectionString: url });
    db.on('error', () => {
      /* the server stops at the end; a failure shows up on the next query */
    });
    try {
      return await measure(ctx, pgd, url, db);
    } finally {
      await db.end().catch(() => undefined);
    }
  } finally {
    await pgd.stop();
  }
}

async function measure(
  ctx: BenchContext,
  pgd: BenchPostgres,
  url: string,
  db: pg.Client,
): Promise<Result[]> {
  const results: Result[] = [];
  let accountIds: string[] = [];
  const svc = await startRendergate(ctx, url, { role: 'serve', instantShotList: true });
  try {
    await db.connect();
    // Creates rotate over 10 accounts, as many clients would send them: all on one account they would
    // queue on its balance row, hold the server's pool connections meanwhile, and starve the worker's
    // claims of connections (the create scenario measures that case).
    const accounts = await Promise.all(Array.from({ length: 10 }, () => makeAccount(svc.base)));
    accountIds = accounts.map((a) => a.accountId);
    let turn = 0;
    const creates = (rate: number, durationS: number) =>
      paced({
        url: svc.base + '/v1/generations',
        rate,
        durationS,
        body: JSON.stringify(SHOT_LIST),
        headers: () => ({
          authorization: `Bearer ${accounts[turn++ % accounts.length].key}`,
          'idempotency-key': nextIdempotencyKey(),
        }),
      });
    ctx.log(`  dispatch: warm-up ${ctx.warmupS}s`);
    await creates(50, ctx.warmupS);
    if (!(await waitDrained(db, 30_000)))
      throw new Error('the warm-up jobs did not drain within 30 s');
    await svc.child.call({ type: 'starts' });

    for (const rate of ctx.quick ? [50] : [20, 200]) {
      const floor = await notifyFloor(url, rate, ctx.durationS);
      const [r, drained] = await profiled(
        ctx,
        svc.child,
        `dispatch-${rate}`,
        async () => {
          const res = await creates(rate, ctx.durationS);
          return [res, await waitDrained(db, 60_000)] as const;
        },
        pgd,
      );
      const starts = await svc.child.call<Array<[string, number]>>({ type: 'starts' });
      const { rows } = await db.query<{ id: string; commit_ms: number; claimed_ms: number }>(
        `SELECT i.generation_id AS id, extract(epoch FROM pg_xact_commit_timestamp(i.xmin))::float8 * 1000 AS commit_ms,
                extract(epoch FROM g.started_at)::float8 * 1000 AS claimed_ms
         FROM idempotency_keys i JOIN generations g ON g.id = i.generation_id WHERE i.generation_id = ANY($1)`,
        [starts.map(([id]) => id)],
      );
      const commitOf = new Map(rows.map((x) => [x.id, x.commit_ms]));
      const claimOf = new Map(rows.map((x) => [x.id, x.claimed_ms]));
      const lat = starts
        .filter(([id]) => commitOf.has(id))
        .map(([id, at]) => at - commitOf.get(id)!);
      // Where the time goes: commit → the claim's UPDATE (started_at = its clock_timestamp()): the
      // wake-up, the listener, fill() and the claim's ranking; claim → run(): the claim's own commit,
      // its answer, and the scratch directory if the backend asks for it (the instant one does).
      const toClaim = starts
        .filter(([id]) => claimOf.has(id))
        .map(([id]) => claimOf.get(id)! - commitOf.get(id)!);
      const claimToRun = starts
        .filter(([id]) => claimOf.has(id))
        .map(([id, at]) => at - claimOf.get(id)!);
      const p50 = percentile(lat, 50);
      const p99 = percentile(lat, 99);
      const unmatched = starts.length - lat.length;
      const note =
        loadProblem(r) ??
        (!drained
          ? 'the queue did not drain within 60 s'
          : unmatched > 0
            ? `${unmatched} starts without a commit time`
            : lat.length < r.ok
              ? `${r.ok - lat.length} creates never started`
              : undefined);
      ctx.log(
        `  dispatch ${rate}/s: ${lat.length} renders, commit→start p50 ${p50?.toFixed(2)} ms p99 ${p99?.toFixed(2)} ms; ` +
          `NOTIFY floor p50 ${percentile(floor, 50)?.toFixed(2)} p99 ${percentile(floor, 99)?.toFixed(2)} ms; ` +
          `commit → claim p50 ${percentile(toClaim, 50)?.toFixed(2)} ms, claim → run() p50 ${percentile(claimToRun, 50)?.toFixed(2)} ms`,
      );
      results.push({
        scenario: 'dispatch',
        variant: 'commit → renderer start',
        concurrency: `${rate}/s`,
        rps: round(r.rps, 0),
        p50: round(p50, 3),
        p99: round(p99, 3),
        baseline: {
          name: 'pg NOTIFY',
          p50: round(percentile(floor, 50), 3),
          p99: round(percentile(floor, 99), 3),
        },
        ratio: null,
        target: 'p50≤10ms, p99≤50ms',
        pass: !note && p50 !== null && p99 !== null && p50 <= 10 && p99 <= 50,
        ...(note ? { note } : {}),
        extra: {
          renders: lat.length,
          max: round(Math.max(...lat), 3),
          min: round(Math.min(...lat), 3),
          createP50: round(r.p50, 3),
          notifySamples: floor.length,
          commitToClaimStart: {
            p50: round(percentile(toClaim, 50), 3),
            p99: round(percentile(toClaim, 99), 3),
          },
          claimStartToRun: {
            p50: round(percentile(claimToRun, 50), 3),
            p99: round(percentile(claimToRun, 99), 3),
          },
        },
      });
    }
  } finally {
    await svc.stop();
  }

  // Drain: the backlog is written straight into the table, the way a create writes it (queued, with
  // a NOTIFY at commit), for a worker-role process with the default concurrency that is already up;
  // the worker is then the only load. Stopped after DRAIN_LIMIT_S: the rate so far is reported.
  const jobs = ctx.quick ? 1_000 : 10_000;
  const concurrency = 2;
  const worker = await startRendergate(ctx, url, {
    role: 'worker',
    instantShotList: true,
    env: { RENDERGATE_WORKER_CONCURRENCY: String(concurrency) },
  });
  try {
    await db.query('BEGIN');
    const {
      rows: [{ t }],
    } = await db.query<{ t: string }>('SELECT now()::text AS t'); // text: keeps the microseconds
    await db.query(
      `INSERT INTO generations (id, account_id, model_id, inputs, cost_cents, deadline_at)
       SELECT 'gen_' || replace(uuidv7()::text, '-', ''), ($1::text[])[1 + i % cardinality($1::text[])], 'rendergate/shot-list',
              json_build_object('text', 'Shot ' || i || '. A lighthouse at dusk.', 'mode', 'summary', 'max_items', 5), 1,
              now() + interval '2 hours'
       FROM generate_series(1, $2::int) i`,
      [accountIds, jobs],
    );
    await db.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, 'rendergate/shot-list']);
    await db.query('COMMIT');
    const {
      rows: [{ committed }],
    } = await db.query<{ committed: Date }>('SELECT clock_timestamp() AS committed');
    const drained = await profiled(
      ctx,
      worker.child,
      'drain',
      () => waitDrained(db, DRAIN_LIMIT_S * 1000),
      pgd,
    );
    const {
      rows: [{ last, n }],
    } = await db.query<{ last: Date | null; n: number }>(
      `SELECT max(completed_at) AS last, count(*)::int AS n FROM generations WHERE created_at = $1::timestamptz AND status = 'succeeded'`,
      [t],
    );
    const seconds = (last!.getTime() - committed.getTime()) / 1000;
    const rate = n / seconds;
    ctx.log(
      `  drain: ${n} of ${jobs} jobs in ${seconds.toFixed(2)} s, ${rate.toFixed(0)} jobs/s (worker concurrency ${concurrency})`,
    );
    results.push({
      scenario: 'dispatch',
      variant: `drain ${jobs} queued jobs`,
      concurrency: `${concurrency} slots`,
      rps: round(rate, 0),
      p50: null,
      p99: null,
      baseline: null,
      ratio: null,
      target: 'report',
      pass: null,
      ...(!drained
        ? { note: `stopped after ${DRAIN_LIMIT_S} s with ${n} done` }
        : n !== jobs
          ? { note: `${jobs - n} jobs did not succeed` }
          : {}),
      extra: {
        jobs,
        done: n,
        seconds: round(seconds, 3),
        accounts: accountIds.length,
        workerConcurrency: concurrency,
      },
    });
  } finally {
    await worker.stop();
  }
  return results;
}
