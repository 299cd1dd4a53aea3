// Tracing across processes (docs/operations.md "Tracing"): an API and a worker, each its own process on
// one database, send their spans to a local OTLP/HTTP receiver. A render's request, create, claim,
// render and store are one trace, carried from the API to the worker on the generation's row, with the
// HTTP and PostgreSQL spans in it. Without OTEL_EXPORTER_OTLP_ENDPOINT no OpenTelemetry module loads:
// a loader hook in each process writes down every @opentelemetry module resolved, and the traced
// process's list shows that the hook sees them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/db.ts';
import { ADMIN, client } from '../helpers/service.ts';
import { spawnService, type Spawned } from '../helpers/spawned.ts';
import { otlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { waitFor } from '../helpers/wait.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let rx: Awaited<ReturnType<typeof otlpReceiver>>;
const procs: Spawned[] = [];
let tmp: string;
let detect: string;

// ESM imports through the loader's resolve hook, CommonJS requires through the resolver.
const DETECT = `import Module, { register } from 'node:module';
import fs from 'node:fs';
register(new URL('./hooks.mjs', import.meta.url));
const resolve = Module._resolveFilename;
Module._resolveFilename = function (...a) {
  const f = resolve.apply(this, a);
  if (f.includes('@opentelemetry')) fs.appendFileSync(process.env.RG_MODULE_LOG, f + '\\n');
  return f;
};`;
const HOOKS = `import fs from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.url.includes('@opentelemetry')) fs.appendFileSync(process.env.RG_MODULE_LOG, r.url + '\\n');
  return r;
}`;

const loaded = (role: string) => {
  const f = path.join(tmp, `${role}.modules`);
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
};

async function spawnRole(role: 'api' | 'worker', name: string, env: Record<string, string>) {
  const dir = fs.mkdtempSync(path.join(tmp, `${name}-`));
  const p = await spawnService(
    {
      DATABASE_URL: dbh.url,
      RENDERGATE_DATA_DIR: dir,
      RENDERGATE_ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'warn',
      RG_MODULE_LOG: path.join(tmp, `${name}.modules`),
      ...env,
    },
    [role],
    ['--import', 'tsx', '--import', detect, 'src/main.ts'],
  );
  procs.push(p);
  return p;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-trace-'));
  fs.writeFileSync(path.join(tmp, 'detect.mjs'), DETECT);
  fs.writeFileSync(path.join(tmp, 'hooks.mjs'), HOOKS);
  detect = pathToFileURL(path.join(tmp, 'detect.mjs')).href;
  dbh = await freshDatabase();
  rx = await otlpReceiver();
}, 120_000);

afterAll(async () => {
  for (const p of procs)
    if (p.proc.exitCode === null && p.proc.signalCode === null) {
      p.proc.kill('SIGTERM');
      await p.exited;
    }
  await rx?.close();
  await dbh?.drop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const gen = (s: ReceivedSpan) => s.attributes['rendergate.generation_id'];
const isPg = (s: ReceivedSpan) =>
  s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql';

it("one trace covers the request, the create, and the worker's claim, render and store, with HTTP and pg spans", async () => {
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
  const api = await spawnRole('api', 'api', otel);
  await spawnRole('worker', 'worker', otel);
  const c = client(api.base);
  const a = await c.account(10_000);
  const created = await c.call('POST', '/v1/generations', {
    key: a.key,
    headers: { 'idempotency-key': crypto.randomUUID() },
    body: {
      modelId: 'rendergate/shot-list',
      inputs: { text: 'The tide turns. A gull lands on the rail.' },
    },
  });
  expect(created.status).toBe(202);
  const id = created.json.id as string;
  expect((await c.waitFinal(a.key, id)).status).toBe('succeeded');

  await waitFor(
    'the create and store spans of the render',
    () =>
      rx.spans.some((x) => x.name === 'generation.store' && gen(x) === id) &&
      rx.spans.some((x) => x.name === 'generation.create' && gen(x) === id),
    { intervalMs: 100 },
  );
  const create = rx.spans.find((x) => x.name === 'generation.create' && gen(x) === id)!;
  const trace = () => rx.spans.filter((x) => x.traceId === create.traceId);
  // the pg span of the store's UPDATE may come in the worker's next export
  await waitFor(
    "a pg span of the worker's in the trace",
    () => trace().some((x) => isPg(x) && x.resource['rendergate.role'] === 'worker'),
    { intervalMs: 100 },
  );
  const spans = trace();
  const byName = (n: string) => spans.filter((x) => x.name === n);

  // The API's request: the HTTP server span (kind SERVER = 2) is the create's parent, and the create's
  // statement is a pg span under it.
  const server = spans.find((x) => x.kind === 2 && x.resource['rendergate.role'] === 'api')!;
  expect(server).toBeDefined();
  expect(server.parentSpanId).toBe('');
  expect(server.name).toBe('POST /v1/generations');
  expect(server.attributes['http.route']).toBe('/v1/generations');
  expect(create.parentSpanId).toBe(server.spanId);
  expect(create.resource['rendergate.role']).toBe('api');
  expect(spans.some((x) => isPg(x) && x.parentSpanId === create.spanId)).toBe(true);

  // The worker, another process, continues the trace from the row: claim, render and store are
  // children of the create, and its statements are pg spans under them.
  for (const n of ['generation.claim', 'generation.render', 'generation.store']) {
    const [s] = byName(n);
    expect(s, n).toBeDefined();
    expect(s.parentSpanId).toBe(create.spanId);
    expect(s.resource['rendergate.role']).toBe('worker');
    expect(gen(s)).toBe(id);
  }
  const store = byName('generation.store')[0];
  expect(spans.some((x) => isPg(x) && x.parentSpanId === store.spanId)).toBe(true);
  const {
    rows: [row],
  } = await dbh.db.query('SELECT trace_parent FROM generations WHERE id = $1', [id]);
  expect(row.trace_parent).toBe(`00-${create.traceId}-${create.spanId}-01`);
  expect([...rx.contentTypes]).toEqual(['application/json']);

  // The worker's polls, lease renewals and other statements outside a render send no trace of their
  // own (its only other spans are the requests its /healthz listener answered: the start's probes).
  const traces = new Set(
    rx.spans
      .filter((x) => x.resource['rendergate.role'] === 'worker' && x.kind !== 2)
      .map((x) => x.traceId),
  );
  expect([...traces]).toEqual([create.traceId]);

  // A one-time link's token and a credential in the query are cut in the request's span, as in
  // the access log.
  const token = 'Zk9qTHh3dE1yV2VxQmJjZGVmZ2hpams';
  await fetch(`${api.base}/reset/${token}?code=s3cr3tc0de1234`);
  await waitFor('the span of the reset link', () =>
    rx.spans.some((x) => x.kind === 2 && String(x.attributes['url.path']).startsWith('/reset/')),
  );
  const reset = rx.spans.find(
    (x) => x.kind === 2 && String(x.attributes['url.path']).startsWith('/reset/'),
  )!;
  expect(JSON.stringify(reset)).not.toContain(token);
  expect(JSON.stringify(reset)).not.toContain('s3cr3tc0de1234');
  expect(reset.attributes['url.path']).toBe('/reset/Zk9q…');
  // The detector sees OpenTelemetry where it is loaded (so its silence below means something).
  expect(loaded('api').some((m) => m.includes('@opentelemetry/sdk-trace-node'))).toBe(true);
  expect(loaded('worker').some((m) => m.includes('@opentelemetry/instrumentation-pg'))).toBe(true);
}, 240_000);

it('without OTEL_EXPORTER_OTLP_ENDPOINT no OpenTelemetry SDK module is loaded and no row carries a trace', async () => {
  const off = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' };
  const api = await spawnRole('api', 'api-off', off);
  await spawnRole('worker', 'worker-off', off);
  const c = client(api.base);
  const a = await c.account(10_000);
  const created = await c.call('POST', '/v1/generations', {
    key: a.key,
    headers: { 'idempotency-key': crypto.randomUUID() },
    body: { modelId: 'rendergate/shot-list', inputs: { text: 'A door opens. Rain.' } },
  });
  expect(created.status).toBe(202);
  expect((await c.waitFinal(a.key, created.json.id)).status).toBe('succeeded');
  // prom-client (src/metrics/) requires @opentelemetry/api itself, for exemplars: the API alone is a
  // no-op without an SDK behind it. Nothing else of OpenTelemetry may load.
  const sdk = (name: string) =>
    loaded(name).filter((m) => !m.includes('/node_modules/@opentelemetry/api/'));
  expect(loaded('api-off').length).toBeGreaterThan(0);
  expect(sdk('api-off')).toEqual([]);
  expect(sdk('worker-off')).toEqual([]);
  const {
    rows: [row],
  } = await dbh.db.query('SELECT trace_parent FROM generations WHERE id = $1', [created.json.id]);
  expect(row.trace_parent).toBeNull();
}, 240_000);
