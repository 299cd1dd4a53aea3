// Runs the service on a catalog of remote-backend models pointing at fake model servers: the whole path
// through the API (create → worker → fake server → storage → download).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { stringify } from 'yaml';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { checkInvariants } from '../../helpers/invariants.ts';

export interface RemoteFixture {
  dbh: Awaited<ReturnType<typeof freshDatabase>>;
  svc: TestService;
  api: ReturnType<typeof client>;
  dir: string;
  key: string;
}

/** A video model of the catalog with the given backend. */
export function videoModel(
  id: string,
  backend: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    id,
    name: id,
    kind: 'video',
    description: 'A remote model.',
    output: { type: 'file', contentType: 'video/mp4' },
    fields: [
      { name: 'prompt', type: 'text', required: true, maxLength: 500 },
      { name: 'duration', type: 'number', integer: true, minimum: 1, maximum: 10, default: 5 },
      { name: 'seed', type: 'number', integer: true, minimum: 0, maximum: 1000 },
    ],
    price: 'duration * 10',
    backend,
    timeLimitSeconds: 20,
    maxAttempts: 3,
    ...extra,
  };
}

export function textModel(
  id: string,
  backend: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    id,
    name: id,
    kind: 'text',
    description: 'A remote text model.',
    output: { type: 'text' },
    fields: [
      { name: 'text', type: 'text', required: true, maxLength: 2000 },
      { name: 'max_items', type: 'number', integer: true, minimum: 1, maximum: 20, default: 5 },
    ],
    price: '3',
    backend,
    timeLimitSeconds: 20,
    maxAttempts: 3,
    openai: { input: 'text' },
    ...extra,
  };
}

/**
 * A local model every remote fixture's catalog also holds (the built-in shot-list renderer). A render of
 * it is the witness that the worker has run a claim round since earlier renders were queued: see
 * `claimRoundPassed`.
 */
export const WITNESS_MODEL = {
  id: 't/witness',
  name: 't/witness',
  kind: 'text',
  description: 'A local model.',
  output: { type: 'text' },
  fields: [{ name: 'text', type: 'text', required: true, maxLength: 2000 }],
  price: '1',
  backend: { driver: 'local', renderer: 'shot-list' },
  timeLimitSeconds: 30,
  maxAttempts: 1,
};

/**
 * Resolves once a render of WITNESS_MODEL, created now, has finished: the worker (two slots, idle) has
 * then run a claim round that saw every render queued before this call, so one it left alone was held
 * back by the worker, not merely not reached yet. The way a test shows that something did NOT happen.
 */
export async function claimRoundPassed(api: ReturnType<typeof client>, key: string): Promise<void> {
  const r = await api.call('POST', '/v1/generations', {
    key,
    body: { modelId: WITNESS_MODEL.id, inputs: { text: 'A gull lands.' } },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(r.status, r.text).toBe(202);
  expect((await api.waitFinal(key, r.json.id)).status).toBe('succeeded');
}

/** Starts the service on the catalog `models()` builds once the fakes (started by `before`) are up. */
export function remoteFixture(setup: {
  before: () => Promise<void>;
  models: () => unknown[];
  files?: () => Record<string, unknown>;
  env?: Record<string, string>;
  after?: () => Promise<void>;
}): RemoteFixture {
  const f = {} as RemoteFixture;
  beforeAll(async () => {
    await setup.before();
    f.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-remote-'));
    for (const [name, content] of Object.entries(setup.files?.() ?? {}))
      fs.writeFileSync(path.join(f.dir, name), JSON.stringify(content));
    fs.writeFileSync(
      path.join(f.dir, 'catalog.yaml'),
      stringify({ models: [...setup.models(), WITNESS_MODEL] }),
    );
    f.dbh = await freshDatabase();
    f.svc = await startTestService(f.dbh.url, {
      env: {
        RENDERGATE_CATALOG: path.join(f.dir, 'catalog.yaml'),
        RENDERGATE_BACKEND_HEALTH_SECONDS: '1',
        ...setup.env,
      },
    });
    f.api = client(f.svc.base);
    f.key = (await f.api.account(1_000_000)).key;
  }, 60_000);
  afterAll(async () => {
    await f.svc?.stop();
    await setup.after?.();
    await f.dbh?.drop();
  });
  return f;
}

export async function create(
  f: RemoteFixture,
  modelId: string,
  inputs: Record<string, unknown>,
  key = f.key,
) {
  const r = await f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId, inputs },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(r.status, r.text).toBe(202);
  return r.json as { id: string; costCents: number };
}

export async function attempts(f: RemoteFixture, id: string): Promise<number> {
  return (await f.dbh.db.query('SELECT attempts FROM generations WHERE id = $1', [id])).rows[0]
    .attempts;
}

/** The stored file of a succeeded generation, as downloaded through the API. */
export async function download(f: RemoteFixture, id: string, key = f.key): Promise<Buffer> {
  const res = await fetch(`${f.svc.base}/v1/generations/${id}/content`, {
    headers: { authorization: `Bearer ${key}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

export async function finalOk(f: RemoteFixture, id: string, key = f.key) {
  const g = await f.api.waitFinal(key, id, 60_000);
  expect(g.status, JSON.stringify(g.error)).toBe('succeeded');
  return g;
}

export async function ledgerFor(f: RemoteFixture, id: string): Promise<string[]> {
  const { rows } = await f.dbh.db.query(
    'SELECT kind FROM ledger_entries WHERE generation_id = $1 ORDER BY kind',
    [id],
  );
  return rows.map((r) => r.kind);
}

export const invariants = (f: RemoteFixture) => checkInvariants(f.dbh.db);
