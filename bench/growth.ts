// Growth: poll, first page of the list and create, with 1,000 and with 1,000,000 generations in the
// database, each size on its own database and a fresh server process; plus that process's RSS after
// the runs. The rows are written with one INSERT … SELECT generate_series and then VACUUM ANALYZE (as
// autovacuum would have done long since): 100 accounts, the benchmark's own account holding 10% (so its
// first page is full at both sizes), created over the last 180 days with time-ordered ids, 94%
// succeeded (files or text), 4% failed, 2% refunded, 1% deleted, with realistic inputs per model. No
// ledger rows: nothing measured here reads them. Role `api`: no worker.
import pg from 'pg';
import type { BenchContext } from './lib/context.ts';
import { profiled } from './lib/context.ts';
import { load, loadProblem, type LoadOptions, type LoadResult } from './lib/load.ts';
import type { Result } from './lib/report.ts';
import { IMAGE_TO_VIDEO, makeAccount, nextIdempotencyKey, startRendergate } from './lib/service.ts';
import { round } from './lib/stats.ts';

const CONNECTIONS = 8;

const FILL = `
WITH s AS (
  SELECT i, t,
         'gen_' || replace(uuidv7(t - now())::text, '-', '') AS id,
         CASE WHEN i % 10 = 0 THEN $2::text ELSE ($1::text[])[1 + (i / 10) % cardinality($1::text[])] END AS account_id,
         CASE WHEN i % 10 = 0 THEN $3::text END AS key_id,
         CASE WHEN (i / 3) % 10 < 5 THEN 'rendergate/image-to-video'
              WHEN (i / 3) % 10 < 8 THEN 'rendergate/start-end-to-video' ELSE 'rendergate/shot-list' END AS model_id,
         (i::bigint * 2654435761) % 1000 AS r
  FROM (SELECT i, now() - make_interval(secs => ($4::int - i) * (15552000.0 / $4::int)) AS t
        FROM generate_series($5::int, $6::int) i) g
), m AS (
  SELECT s.*,
         CASE WHEN r < 940 THEN 'succeeded' WHEN r < 980 THEN 'failed' ELSE 'refunded' END AS status,
         CASE model_id WHEN 'rendergate/image-to-video' THEN 30 WHEN 'rendergate/start-end-to-video' THEN 45 ELSE 1 END AS cost
  FROM s
)
INSERT INTO generations (id, account_id, key_id, usage_day, model_id, inputs, status, cost_cents, refunded_cents,
  content_key, content_type, content_bytes, content_etag, text_output, error_code, error_message,
  created_at, started_at, completed_at, deleted_at, attempts, run_after, deadline_at)
SELECT id, account_id, key_id, t::date, model_id,
  CASE model_id
    WHEN 'rendergate/image-to-video' THEN json_build_object('prompt', 'A slow push in on scene ' || i || ', golden hour, light haze',
      'image', 'https://cdn.example.com/u/' || (i % 997) || '/still-' || i || '.jpg', 'guidance_scale', 0.5, 'duration', 5)
    WHEN 'rendergate/start-end-to-video' THEN json_build_object('prompt', 'The city wakes up between frame ' || i || ' and the next',
      'image', 'https://cdn.example.com/u/' || (i % 997) || '/start-' || i || '.jpg',
      'last_image', 'https://cdn.example.com/u/' || (i % 997) || '/end-' || i || '.jpg',
      'duration', 5, 'resolution', '720p', 'bgm', true, 'movement_amplitude', 'auto')
    ELSE json_build_object('text', 'Scene ' || i || '. A lighthouse at dusk. Waves break below. A gull lands on the rail.',
      'mode', 'summary', 'max_items', 5)
  END,
  status, cost, CASE WHEN status = 'succeeded' THEN 0 ELSE cost END,
  CASE WHEN status = 'succeeded' AND model_id <> 'rendergate/shot-list' AND r % 100 <> 7 THEN 'generations/' || id || '.mp4' END,
  CASE WHEN status = 'succeeded' AND model_id <> 'rendergate/shot-list' THEN 'video/mp4' END,
  CASE WHEN status = 'succeeded' AND model_id <> 'rendergate/shot-list' AND r % 100 <> 7 THEN 1200000 + r * 1000 END,
  CASE WHEN status = 'succeeded' AND model_id <> 'rendergate/shot-list' AND r % 100 <> 7 THEN '"' || substr(md5(id), 1, 16) || '"' END,
  CASE WHEN status = 'succeeded' AND model_id = 'rendergate/shot-list' THEN 'A lighthouse stands at dusk while waves break below.' END,
  CASE status WHEN 'failed' THEN 'INPUT_FETCH_FAILED' WHEN 'refunded' THEN 'REFUNDED_BY_OPERATOR' END,
  CASE status WHEN 'failed' THEN 'The input image could not be fetched (HTTP 404).' WHEN 'refunded' THEN 'The charge was returned by the operator.' END,
  t, t + interval '1 second', t + interval '40 seconds',
  -- 1% deleted; a deleted one's file is gone (the content_key CASE above leaves r % 100 = 7 without one)
  CASE WHEN r % 100 = 7 THEN t + interval '1 day' END,
  1, t, t + interval '2 hours'
FROM m`;

/**
 * Writes the rows fast: the table's indexes are dropped and built again afterwards from their own
 * definitions (what a bulk load does; the result is the same indexes), foreign-key triggers are off
 * for the loading sessions (the ids come from the accounts table; CHECK constraints still apply), and
 * two sessions write half each.
 */
async function fill(url: string, params: [string[], string, string, number]): Promise<void> {
  const session = async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query('SET session_replication_role = replica');
    return c;
  };
  const c = await session();
  try {
    const { rows: indexes } = await c.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'generations' AND indexname <> 'generations_pkey'`,
    );
    for (const ix of indexes) await c.query(`DROP INDEX ${c.escapeIdentifier(ix.indexname)}`);
    await c.query('ALTER TABLE generations DROP CONSTRAINT generations_pkey');
    const size = params[3];
    const half = Math.floor(size / 2);
    const c2 = await session();
    try {
      await Promise.all([
        c.query(FILL, [...params, 1, half]),
        c2.query(FILL, [...params, half + 1, size]),
      ]);
    } finally {
      await c2.end();
    }
    await c.query(`SET maintenance_work_mem = '256MB'`);
    await c.query('ALTER TABLE generations ADD CONSTRAINT generations_pkey PRIMARY KEY (id)');
    for (const ix of indexes) await c.query(ix.indexdef);
    await c.query('VACUUM (ANALYZE) generations');
  } finally {
    await c.end();
  }
}

interface Sized {
  size: number;
  db: string;
  svc: Awaited<ReturnType<typeof startRendergate>>;
  endpoints: Array<[string, Omit<LoadOptions, 'connections' | 'durationS'>]>;
  setupS: number;
  tableMb: number;
}

/** A database of `size` generations and a fresh server on it, with the requests to measure. */
async function prepare(ctx: BenchContext, size: number): Promise<Sized> {
  const db = `bench_growth_${size}`;
  const url = await ctx.pg.createDatabase(db);
  const svc = await startRendergate(ctx, url, { role: 'api' });
  try {
    const acct = await makeAccount(svc.base);
    const t0 = performance.now();
    const others = (
      await ctx.pg.query<{ id: string }>(
        `INSERT INTO accounts (id, email, name, balance_cents)
       SELECT 'acct_' || replace(uuidv7()::text, '-', ''), 'other-' || i || '@bench.test', 'Other ' || i, 100000
       FROM generate_series(1, 99) i RETURNING id`,
        [],
        db,
      )
    ).map((r) => r.id);
    await fill(url, [others, acct.accountId, acct.keyId, size]);
    const setupS = (performance.now() - t0) / 1000;
    const [{ id: pollId }] = await ctx.pg.query<{ id: string }>(
      `SELECT id FROM generations WHERE account_id = $1 AND status = 'succeeded' AND deleted_at IS NULL
       ORDER BY id OFFSET (SELECT count(*) / 2 FROM generations WHERE account_id = $1) LIMIT 1`,
      [acct.accountId],
      db,
    );
    const [{ mb }] = await ctx.pg.query<{ mb: number }>(
      `SELECT (pg_total_relation_size('generations') / 1048576)::int AS mb`,
      [],
      db,
    );
    ctx.log(
      `  growth: ${size} rows written in ${setupS.toFixed(1)} s (generations ${mb} MB with indexes)`,
    );
    const auth = { authorization: `Bearer ${acct.key}` };
    return {
      size,
      db,
      svc,
      setupS,
      tableMb: mb,
      endpoints: [
        ['poll', { url: `${svc.base}/v1/generations/${pollId}`, headers: auth }],
        ['list first page', { url: `${svc.base}/v1/generations?limit=20`, headers: auth }],
        [
          'create',
          {
            url: `${svc.base}/v1/generations`,
            method: 'POST',
            body: JSON.stringify(IMAGE_TO_VIDEO),
            headers: { ...auth, 'content-type': 'application/json' },
            perRequestHeaders: () => ({ 'idempotency-key': nextIdempotencyKey() }),
          },
        ],
      ],
    };
  } catch (e) {
    await svc.stop();
    throw e;
  }
}

const label = (n: number) =>
  n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n);

export async function run(ctx: BenchContext): Promise<Result[]> {
  const [small, large] = ctx.quick ? [1_000, 100_000] : [1_000, 1_000_000];
  const sized: Sized[] = [];
  try {
    sized.push(await prepare(ctx, small));
    sized.push(await prepare(ctx, large));
    // Both servers are up; each endpoint is measured on one size then the other, so drift on a
    // shared machine hits both alike. Each server is idle while the other one is measured.
    for (const s of sized)
      for (const [, o] of s.endpoints)
        await load({ ...o, connections: CONNECTIONS, durationS: ctx.warmupS / 2 });
    const out = sized.map(() => new Map<string, LoadResult>());
    for (let e = 0; e < sized[0].endpoints.length; e++) {
      for (const [i, s] of sized.entries()) {
        const [name, o] = s.endpoints[e];
        const run = () => load({ ...o, connections: CONNECTIONS, durationS: ctx.durationS });
        out[i].set(
          name,
          await profiled(ctx, s.svc.child, `growth-${name.replace(/ /g, '-')}-${s.size}`, run),
        );
      }
    }
    const rss = await Promise.all(
      sized.map(async (s) => (await s.svc.child.call<number>({ type: 'rss' })) / 2 ** 20),
    );
    return report(ctx, sized, out, rss);
  } finally {
    for (const s of sized) {
      await s.svc.stop();
      await ctx.pg.dropDatabase(s.db).catch(() => undefined);
    }
  }
}

function report(
  ctx: BenchContext,
  sized: Sized[],
  out: Array<Map<string, LoadResult>>,
  rssMb: number[],
): Result[] {
  const [small, large] = sized.map((s) => s.size);
  const a = { out: out[0], rssMb: rssMb[0], setupS: sized[0].setupS, tableMb: sized[0].tableMb };
  const b = { out: out[1], rssMb: rssMb[1], setupS: sized[1].setupS, tableMb: sized[1].tableMb };
  const results: Result[] = [];
  for (const [name, rb] of b.out) {
    const ra = a.out.get(name)!;
    const ratio = ra.p50 && rb.p50 ? rb.p50 / ra.p50 : null;
    const ratio99 = ra.p99 && rb.p99 ? rb.p99 / ra.p99 : null;
    const note = loadProblem(ra) ?? loadProblem(rb) ?? undefined;
    ctx.log(
      `  growth ${name}: p50 ${ra.p50?.toFixed(2)} → ${rb.p50?.toFixed(2)} ms, p99 ${ra.p99?.toFixed(2)} → ${rb.p99?.toFixed(2)} ms`,
    );
    results.push(
      {
        scenario: 'growth',
        variant: `${name} @${label(small)}`,
        concurrency: CONNECTIONS,
        rps: round(ra.rps, 0),
        p50: round(ra.p50, 3),
        p99: round(ra.p99, 3),
        baseline: null,
        ratio: null,
        target: '-',
        pass: null,
      },
      {
        scenario: 'growth',
        variant: `${name} @${label(large)}`,
        concurrency: CONNECTIONS,
        rps: round(rb.rps, 0),
        p50: round(rb.p50, 3),
        p99: round(rb.p99, 3),
        baseline: {
          name: `@${label(small)}`,
          p50: round(ra.p50, 3),
          p99: round(ra.p99, 3),
          rps: round(ra.rps, 0),
        },
        ratio: round(ratio, 3),
        target: 'p50≤1.5×',
        pass: ratio !== null && !note && ratio <= 1.5,
        ...(note ? { note } : {}),
        extra: { p99Ratio: round(ratio99, 3) },
      },
    );
  }
  const rssRatio = b.rssMb / a.rssMb;
  results.push({
    scenario: 'growth',
    variant: `server RSS @${label(large)}: ${b.rssMb.toFixed(0)} MB`,
    concurrency: '-',
    rps: null,
    p50: null,
    p99: null,
    baseline: { name: `@${label(small)}`, mb: round(a.rssMb, 1) },
    ratio: round(rssRatio, 3),
    target: 'RSS ≤1.25×',
    pass: rssRatio <= 1.25,
    extra: {
      rssMb: { [small]: round(a.rssMb, 1), [large]: round(b.rssMb, 1) },
      setupSeconds: { [small]: round(a.setupS, 1), [large]: round(b.setupS, 1) },
      tableMb: { [small]: a.tableMb, [large]: b.tableMb },
    },
  });
  return results;
}
