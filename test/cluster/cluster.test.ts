// Rendergate scaled out: one PostgreSQL server, one S3-compatible store, two stateless API processes
// and two worker processes, each a real `rendergate` process started with RENDERGATE_ROLE. Under a load
// spread over both APIs (repeated idempotency keys included), one worker is killed with SIGKILL in the
// middle of a render and one API process is restarted. Afterwards: every generation is final, every
// file is served byte-identical by either API, rate limits and daily caps held exactly across both
// APIs, a model limited to one render at a time never ran two, a flooding account did not starve
// another, and the money invariants hold. A model served by a pool of two fake Cog servers taking one
// render each never had two renders on one server at once, whichever worker sent them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.ts';
import { createPool, type Db } from '../../src/db/pool.ts';
import { imageServer } from '../helpers/images.ts';
import { queueDrained } from '../helpers/db.ts';
import { checkInvariants } from '../helpers/invariants.ts';
import { awayFromMinuteEdge } from '../helpers/minute.ts';
import { ADMIN } from '../helpers/service.ts';
import { startProcess, startS3, writeCatalog, type Proc, type S3Server } from './infra.ts';
import { cluster, runPool, sampleRunning, sleep, type Answer } from './load.ts';
import { waitFor } from '../helpers/wait.ts';
import { cogFake, type CogFake } from '../fakes/cog.ts';

const TEXT = 'rendergate/shot-list'; // limited to one render at a time, cluster-wide, by the test's catalog
const VIDEO = 'rendergate/image-to-video';
const POOLED = 'test/pooled-cog'; // rendered by two fake Cog servers, one render each at a time
const POOLED_RENDERS = 16;
const BUCKET = 'renders';
const PREFIX = 'cluster';

let dir = '';
let pgServer: EmbeddedPostgres | null = null;
let db: Db | null = null;
let s3: S3Server | null = null;
let img: Awaited<ReturnType<typeof imageServer>> | null = null;
const cogs: CogFake[] = [];
let env: Record<string, string> = {};
const apis: Proc[] = [];
let sampler: Awaited<ReturnType<typeof sampleRunning>> | null = null;
const workers: Proc[] = [];
const call = cluster(() => apis.map((a) => a.base));
const timings: string[] = [];
let t0 = Date.now();
const phase = (name: string) => {
  timings.push(`${name} ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  t0 = Date.now();
};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-cluster-'));
  fs.chmodSync(dir, 0o755); // the embedded Postgres runs as its own user when the tests run as root
  img = await imageServer();
  s3 = await startS3(path.join(dir, 's3'), BUCKET);
  pgServer = await startEmbeddedPostgres(path.join(dir, 'pg'));
  db = createPool(pgServer.url, 4);
  cogs.push(await cogFake({ delayMs: 150 }), await cogFake({ delayMs: 150 }));
  const pooled = {
    id: POOLED,
    name: 'Pooled Cog',
    kind: 'video',
    description: 'A model on two Cog servers.',
    output: { type: 'file', contentType: 'video/mp4' },
    fields: [{ name: 'prompt', type: 'text', required: true }],
    price: '5',
    timeLimitSeconds: 60,
    maxAttempts: 3,
    backend: { driver: 'cog', urls: cogs.map((c) => c.base), concurrencyPerUrl: 1 },
  };
  env = {
    DATABASE_URL: pgServer.url,
    RENDERGATE_STORAGE: `s3://${BUCKET}/${PREFIX}`,
    ...s3.env,
    RENDERGATE_CATALOG: writeCatalog(path.join(dir, 'catalog.yaml'), { [TEXT]: 1 }, [pooled]),
    RENDERGATE_BACKEND_HEALTH_SECONDS: '1',
    RENDERGATE_ADMIN_TOKEN: ADMIN,
    RENDERGATE_ALLOW_PRIVATE_URLS: '1',
    RENDERGATE_WORKER_CONCURRENCY: '2',
    RENDERGATE_DATA_DIR: path.join(dir, 'unused-data-dir'), // nothing may depend on a local disk
    LOG_LEVEL: 'warn',
  };
  // Both APIs start at once: each migrates the empty database, under the migrator's advisory lock.
  apis.push(...(await Promise.all([startProcess('api', env), startProcess('api', env)])));
  phase('infra and 2 APIs up');
}, 120_000);

afterAll(async () => {
  await sampler?.stop().catch(() => undefined);
  await Promise.all([...apis, ...workers].map((p) => p.kill('SIGKILL')));
  await db?.end();
  await pgServer?.stop();
  await s3?.close();
  await img?.close();
  await Promise.all(cogs.map((c) => c.close()));
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  if (timings.length) process.stdout.write(`cluster test phases: ${timings.join(', ')}\n`);
});

// Workers log at info (startProcess waits for their "running" line; the test reads their render logs).
// They run at a lower CPU priority: vitest runs another test file alongside, and the renders here must
// not push that file's timing-sensitive renders (a shutdown grace period, say) past their limits.
const startWorker = () => startProcess('worker', { ...env, LOG_LEVEL: 'info' }, { nice: 10 });

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

async function admin(method: string, p: string, body?: unknown) {
  const r = await call(0, method, '/admin/v1' + p, { key: ADMIN, body });
  if (r.status >= 300)
    throw new Error(`admin ${method} ${p} -> ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

async function account(
  cents: number,
  key: { dailyCapCents?: number; rateLimitPerMinute?: number } = {},
) {
  const a = await admin('POST', '/accounts', {
    email: `c-${Math.random().toString(36).slice(2)}@example.test`,
  });
  if (cents > 0) await admin('POST', `/accounts/${a.id}/credits`, { amountCents: cents });
  const k = await admin('POST', `/accounts/${a.id}/keys`, key);
  return { id: a.id as string, key: k.key as string, keyId: k.id as string };
}

/** POST /v1/generations, retried while another request with the same key is still in flight. */
async function create(api: number, key: string, body: unknown, idem: string): Promise<Answer> {
  for (let attempt = 0; ; attempt++) {
    const r = await call(api, 'POST', '/v1/generations', {
      key,
      body,
      headers: { 'idempotency-key': idem },
    });
    if (r.status !== 409 || r.json?.code !== 'IDEMPOTENCY_KEY_IN_USE' || attempt === 500) return r;
    await sleep(10 + Math.random() * 20);
  }
}

const textBody = (i: number, extra: Record<string, unknown> = {}) => ({
  modelId: TEXT,
  inputs: {
    text: `Scene ${i}. A cyclist crosses a quiet street at dawn. Pigeons rise from a roof.`,
    ...extra,
  },
});

it('runs as 2 APIs and 2 workers on one Postgres and one S3 store: crash, restart, limits, fairness, money', async () => {
  // ---- Fairness. Account A floods the limited model's queue, then B asks for 3 renders; the workers
  // start only now, so the whole backlog is there when they claim.
  const A = await account(100_000, { rateLimitPerMinute: 100_000 });
  const B = await account(1_000);
  const flood = await runPool(range(100), 8, (i) => create(i, A.key, textBody(i), `fair-a-${i}`));
  expect(flood.map((r) => r.status)).toEqual(range(100).map(() => 202));
  for (const i of range(3))
    expect((await create(i, B.key, textBody(1000 + i), `fair-b-${i}`)).status).toBe(202);
  sampler = await sampleRunning(pgServer!.url, TEXT);
  workers.push(...(await Promise.all([startWorker(), startWorker()])));
  phase('fairness backlog queued, 2 workers up');
  await queueDrained(db!, { timeoutMs: 180_000, accountIds: [A.id, B.id] });
  const fair = await db!.query(
    `SELECT account_id, started_at FROM generations WHERE account_id = ANY($1) ORDER BY started_at, id`,
    [[A.id, B.id]],
  );
  const aStarts = fair.rows
    .filter((r) => r.account_id === A.id)
    .map((r) => (r.started_at as Date).getTime());
  const bStarts = fair.rows
    .filter((r) => r.account_id === B.id)
    .map((r) => (r.started_at as Date).getTime());
  const bRanks = fair.rows.flatMap((r, rank) => (r.account_id === B.id ? [rank] : []));
  expect(
    Math.max(...bStarts),
    `B's renders started at ranks ${bRanks.join(',')} of ${fair.rows.length}`,
  ).toBeLessThan(aStarts[aStarts.length - 20]);
  phase('fairness backlog rendered');

  // ---- The load: videos through S3 (two of them held on their input image so that they are
  // mid-render), and text creates with repeated idempotency keys, spread over both APIs.
  const L = await account(1_000_000, { rateLimitPerMinute: 100_000 });
  const video = (i: number, image: string) => ({
    modelId: VIDEO,
    inputs: { prompt: `slow zoom in on the scene, take ${i}`, image },
  });
  const heldPaths = ['/held/v0.png', '/held/v1.png'];
  const heldIds: string[] = [];
  for (const [i, p] of heldPaths.entries())
    heldIds.push((await create(i, L.key, video(i, img!.url(p)), `held-${i}`)).json.id);

  const KEYS = 200;
  type Job = { kind: 'text'; k: number } | { kind: 'video'; v: number };
  const jobs: Job[] = range(KEYS).flatMap((k) =>
    range(1 + (k % 3)).map((): Job => ({ kind: 'text', k })),
  );
  for (let i = jobs.length - 1; i > 0; i--) {
    const j = (i * 7919) % (i + 1);
    [jobs[i], jobs[j]] = [jobs[j], jobs[i]];
  }
  for (const v of range(22)) jobs.splice(v * 18, 0, { kind: 'video', v });
  let done = 0;
  let restarted = () => {};
  const apiBack = new Promise<void>((r) => {
    restarted = r;
  });
  const lastQuarter = Math.ceil(jobs.length * 0.75);
  const textAnswers = new Map<number, Answer[]>();
  const videoIds: string[] = [...heldIds];
  const load = runPool(jobs, 12, async (job, i) => {
    if (i >= lastQuarter) await apiBack; // the last quarter also goes to the restarted API
    const r =
      job.kind === 'text'
        ? await create(i, L.key, textBody(job.k), `load-${job.k}`)
        : await create(
            i,
            L.key,
            video(job.v, img!.url(job.v % 2 ? '/a.png' : '/b.png')),
            `video-${job.v}`,
          );
    if (job.kind === 'text') textAnswers.set(job.k, [...(textAnswers.get(job.k) ?? []), r]);
    else if (r.status === 202) videoIds.push(r.json.id);
    done++;
    return r;
  });

  // ---- Chaos, during the load: restart one API process (gracefully, as a rolling deploy does) on the
  // same port, and SIGKILL a worker whose render is waiting on its held image; its supervisor starts a
  // new worker.
  const chaos = (async () => {
    await waitFor(
      'both held renders fetching their image',
      () => heldPaths.every((p) => (img!.hits[p] ?? 0) > 0),
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    const { rows } = await db!.query(
      `SELECT lease_owner FROM generations WHERE id = ANY($1) AND lease_owner IS NOT NULL`,
      [heldIds],
    );
    const holders = rows.map((r) => Number((r.lease_owner as string).split(':')[1]));
    const victim = workers.find((w) => holders.includes(w.pid));
    expect(victim, `a worker holds a held render (owners ${holders.join(',')})`).toBeDefined();
    const restart = (async () => {
      await waitFor('a quarter of the load sent', () => done >= jobs.length / 4, {
        timeoutMs: 60_000,
        intervalMs: 10,
      });
      const port = apis[1].port;
      phase(`api ${apis[1].pid} stopping at ${done}/${jobs.length} requests`);
      expect(await apis[1].kill('SIGTERM')).toBe(0);
      apis[1] = await startProcess('api', env, { port });
      restarted();
      phase(`api restarted at ${done}/${jobs.length} requests`);
    })();
    await waitFor('half of the load sent', () => done >= jobs.length / 2, {
      timeoutMs: 60_000,
      intervalMs: 10,
    });
    await victim!.kill('SIGKILL');
    phase(`worker ${victim!.pid} killed at ${done}/${jobs.length} requests`);
    heldPaths.forEach((p) => img!.release(p));
    workers.push(await startWorker());
    await restart;
    return victim!;
  })();
  // Renders of the pooled model, sent through both APIs while the rest of the load runs.
  const pooledLoad = runPool(range(POOLED_RENDERS), 4, (i) =>
    create(i, L.key, { modelId: POOLED, inputs: { prompt: `pooled ${i}` } }, `pooled-${i}`),
  );
  const [answers, victim, pooledAnswers] = await Promise.all([load, chaos, pooledLoad]);
  expect(pooledAnswers.map((r) => r.status)).toEqual(range(POOLED_RENDERS).map(() => 202));
  expect(answers.filter((r) => r.status !== 202).map((r) => [r.status, r.json])).toEqual([]);
  expect(answers.slice(lastQuarter).filter((r) => r.api === 1).length).toBeGreaterThan(20);
  phase('load sent');

  // ---- Rate limit, exact across both APIs: 60 requests at once on a key allowing 40 a minute.
  await awayFromMinuteEdge(20_000); // the count starts again each minute
  const R = await account(0, { rateLimitPerMinute: 40 });
  const limited = await Promise.all(range(60).map((i) => call(i, 'GET', '/v1/me', { key: R.key })));
  expect(new Set(limited.map((r) => r.api))).toEqual(new Set([0, 1]));
  expect(limited.filter((r) => r.status === 200)).toHaveLength(40);
  expect(
    limited.filter(
      (r) => r.status === 429 && r.json.code === 'RATE_LIMITED' && r.headers.get('retry-after'),
    ),
  ).toHaveLength(20);

  // A key revoked through one API is refused by the other within a second: a request sent once that
  // second has passed is refused, however slowly the machine answers (no upper bound on its speed).
  await admin('DELETE', `/keys/${R.keyId}`);
  await sleep(1_000);
  const revoked = await call(1, 'GET', '/v1/me', { key: R.key });
  expect([revoked.status, revoked.json.code]).toEqual([401, 'API_KEY_REVOKED']);

  // ---- Daily cap, exact across both APIs: 60 creates at once of 2 cents each on a 75-cent cap.
  const C = await account(10_000, { dailyCapCents: 75 });
  const capBody = (i: number) => textBody(5000 + i, { mode: 'shot_list' });
  expect(
    (await call(0, 'POST', '/v1/quote', { key: C.key, body: capBody(0) })).json.costCents,
  ).toBe(2);
  const capped = await Promise.all(range(60).map((i) => create(i, C.key, capBody(i), `cap-${i}`)));
  expect(capped.filter((r) => r.status === 202)).toHaveLength(37);
  expect(
    capped.filter((r) => r.status === 409 && r.json.code === 'API_KEY_DAILY_CAP'),
  ).toHaveLength(23);
  for (const api of [0, 1]) {
    const me = await call(api, 'GET', '/v1/me', { key: C.key });
    expect(me.json).toMatchObject({
      balanceCents: 10_000 - 74,
      key: { dailyCapCents: 75, spentTodayCents: 74 },
    });
  }

  // The same idempotency key with another body, on the other API: refused, nothing created.
  const reused = await create(1, L.key, textBody(999_999), 'load-0');
  expect([reused.status, reused.json.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);

  // Cancelling through an API stops the render on whichever worker runs it (LISTEN/NOTIFY).
  const doomed = (await create(0, B.key, video(99, img!.url('/held/cancel.png')), 'cancel-0')).json
    .id as string;
  await waitFor(
    'the doomed render fetching its image',
    () => (img!.hits['/held/cancel.png'] ?? 0) > 0,
    { timeoutMs: 30_000, intervalMs: 20 },
  );
  expect((await call(1, 'DELETE', `/v1/generations/${doomed}`, { key: B.key })).json).toEqual({
    id: doomed,
    deleted: true,
  });
  await waitFor(
    'the worker stopping the cancelled render',
    () =>
      workers.some((w) =>
        new RegExp(`"generationId":"${doomed}"[^\n]*"msg":"render cancelled"`).test(w.output()),
      ),
    { timeoutMs: 10_000, intervalMs: 50 },
  );
  expect(
    (await db!.query(`SELECT status, lease_owner FROM generations WHERE id = $1`, [doomed])).rows,
  ).toEqual([{ status: 'refunded', lease_owner: null }]);
  phase('limits, caps, revocation, cancellation checked');

  // ---- Every generation reaches a final status; the killed worker's held render is taken over once
  // its lease lapses.
  // Clients poll until nothing of theirs is queued, through both APIs.
  for (const [n, acct] of [L, C].entries()) {
    await waitFor(
      'every generation final',
      async () => {
        const r = await call(n, 'GET', '/v1/generations?status=queued&limit=1', { key: acct.key });
        return r.status === 200 && r.json.data.length === 0;
      },
      { timeoutMs: 300_000, intervalMs: 250 },
    ); // generous: on a 2-core machine shared with the rest of the suite this took up to 2 min
  }
  expect(
    (await db!.query(`SELECT count(*)::int AS n FROM generations WHERE status = 'queued'`)).rows[0]
      .n,
  ).toBe(0);
  const { max, samples, busy } = await sampler.stop();
  phase('all final');

  // Idempotency: each key gave one generation, whichever API answered and however often it was sent.
  const idem = await db!.query(
    `SELECT key, generation_id FROM idempotency_keys WHERE account_id = $1 AND key LIKE 'load-%'`,
    [L.id],
  );
  const byKey = new Map(idem.rows.map((r) => [r.key as string, r.generation_id as string]));
  expect(byKey.size).toBe(KEYS);
  for (const [k, rs] of textAnswers) {
    expect(new Set(rs.map((r) => r.json.id)), `key load-${k}`).toEqual(
      new Set([byKey.get(`load-${k}`)]),
    );
    expect(
      rs.filter((r) => r.headers.get('idempotent-replayed') !== 'true').length,
    ).toBeLessThanOrEqual(1);
  }
  const counts = await db!.query(
    `SELECT model_id, status, count(*)::int AS n FROM generations WHERE account_id = $1 GROUP BY 1, 2 ORDER BY 1`,
    [L.id],
  );
  expect(counts.rows).toEqual([
    { model_id: VIDEO, status: 'succeeded', n: 24 },
    { model_id: TEXT, status: 'succeeded', n: KEYS },
    { model_id: POOLED, status: 'succeeded', n: POOLED_RENDERS },
  ]);
  // The pool: both servers used, neither ever sent two renders at once by the two workers together.
  expect(cogs.map((c) => c.maxInFlight)).toEqual([1, 1]);
  expect(cogs.every((c) => c.predictions.length > 0)).toBe(true);
  const pooledFile = await db!.query(`SELECT id FROM generations WHERE model_id = $1 LIMIT 1`, [
    POOLED,
  ]);
  const got = await fetch(`${apis[1].base}/v1/generations/${pooledFile.rows[0].id}/content`, {
    headers: { authorization: `Bearer ${L.key}` },
  });
  const served = Buffer.from(await got.arrayBuffer());
  expect(cogs.some((c) => c.output.equals(served))).toBe(true);
  const capStatus = await db!.query(
    `SELECT status, count(*)::int AS n FROM generations WHERE account_id = $1 GROUP BY 1`,
    [C.id],
  );
  expect(capStatus.rows).toEqual([{ status: 'succeeded', n: 37 }]);

  // The killed worker's held render was claimed again by the surviving worker and finished.
  const held = await db!.query(`SELECT id, attempts, status FROM generations WHERE id = ANY($1)`, [
    heldIds,
  ]);
  expect(held.rows.every((r) => r.status === 'succeeded')).toBe(true);
  expect(held.rows.some((r) => r.attempts >= 2)).toBe(true);
  expect(victim.alive()).toBe(false);
  expect(workers).toHaveLength(3);

  // Per-model concurrency: never two renders of the limited model at once, by the leases sampled while
  // everything ran and by the recorded start and end of every render that ran in one attempt.
  expect(samples).toBeGreaterThan(200);
  expect(busy).toBeGreaterThan(0);
  expect(max).toBe(1);
  const spans = await db!.query(
    `SELECT id, started_at, completed_at FROM generations WHERE model_id = $1 AND attempts = 1 ORDER BY started_at, id`,
    [TEXT],
  );
  expect(spans.rows.length).toBeGreaterThan(300);
  const overlaps = spans.rows.flatMap((r, i) => {
    const prev = spans.rows[i - 1];
    return prev && r.started_at < prev.completed_at
      ? [
          `${prev.id} ended ${prev.completed_at.toISOString()}, after ${r.id} started ${r.started_at.toISOString()}`,
        ]
      : [];
  });
  expect(overlaps).toEqual([]);

  // Workers report their renders on their own /metrics, and are ready.
  for (const w of workers.filter((x) => x.alive())) {
    expect((await fetch(`${w.base}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${w.base}/metrics`)).text()).toMatch(
      /^rendergate_renders_total\{model="[^"]+",status="succeeded"\} [1-9]/m,
    );
    expect((await fetch(`${w.base}/v1/me`)).status).toBe(404);
  }

  // Every video is served by either API, byte-identical, from S3, with ranges.
  expect(await s3!.count(`${PREFIX}/generations/`)).toBe(24 + POOLED_RENDERS);
  await runPool(videoIds, 4, async (id, i) => {
    const files = await Promise.all(
      [0, 1].map(async (api) => {
        const meta = await call(api, 'GET', `/v1/generations/${id}`, { key: L.key });
        expect(meta.json).toMatchObject({ status: 'succeeded', contentType: 'video/mp4' });
        const res = await fetch(`${apis[api].base}/v1/generations/${id}/content`, {
          headers: { authorization: `Bearer ${L.key}` },
        });
        expect(res.status).toBe(200);
        return {
          body: Buffer.from(await res.arrayBuffer()),
          etag: res.headers.get('etag'),
          length: Number(res.headers.get('content-length')),
        };
      }),
    );
    expect(files[0].body.equals(files[1].body)).toBe(true);
    expect(files[0].etag).toBe(files[1].etag);
    expect(files[0].body.length).toBe(files[0].length);
    expect(files[0].body.subarray(4, 8).toString()).toBe('ftyp');
    const part = await fetch(`${apis[i % 2].base}/v1/generations/${id}/content`, {
      headers: { authorization: `Bearer ${L.key}`, range: 'bytes=1000-4999' },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 1000-4999/${files[0].length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(files[0].body.subarray(1000, 5000))).toBe(
      true,
    );
  });
  phase('downloads checked');

  // Money: the invariants, and each account's balance is its credit minus what it was charged.
  await checkInvariants(db!);
  for (const [acct, credit] of [
    [A, 100_000],
    [B, 1_000],
    [L, 1_000_000],
    [C, 10_000],
  ] as const) {
    const { rows } = await db!.query(
      `SELECT coalesce(sum(cost_cents - refunded_cents), 0)::int AS spent FROM generations WHERE account_id = $1`,
      [acct.id],
    );
    expect((await call(1, 'GET', '/v1/me', { key: acct.key })).json.balanceCents).toBe(
      credit - rows[0].spent,
    );
  }

  // An API replica without the shared admin token refuses to start rather than invent its own.
  await expect(startProcess('api', { ...env, RENDERGATE_ADMIN_TOKEN: '' })).rejects.toThrow(
    /RENDERGATE_ADMIN_TOKEN: required/,
  );

  // The survivors stop gracefully.
  for (const p of [...apis, ...workers.filter((w) => w !== victim)])
    expect(await p.kill('SIGTERM'), `${p.role} ${p.pid}`).toBe(0);
  phase('graceful stop');
}, 600_000);
