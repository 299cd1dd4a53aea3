// Test keys at scale (docs/api.md "Test keys"): a test render's file is one stored object shared by
// every test render of the same content (src/queue/test-stored.ts), so deleting or expiring one render
// never takes the file from another, and the orphan sweep removes it only once no row names it; and
// test creates, their renders, failures and cancels racing live creates on the same accounts never
// deadlock (nothing retries a 40P01 any more), whether a render is created final or recorded after.
// No worker runs here: every result is the service's own.
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { webhookReceiver } from '../../helpers/webhook-receiver.ts';
import { ORPHAN_MIN_AGE_MS, removeOrphans } from '../../../src/queue/orphans.ts';
import { janitor } from '../../helpers/janitor.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let api: ReturnType<typeof client>;
/** What the service logged at warn or above. */
const warnings: string[] = [];

beforeAll(async () => {
  dbh = await freshDatabase();
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      warnings.push(chunk.toString());
      cb();
    },
  });
  svc = await startTestService(dbh.url, {
    env: { RENDERGATE_WORKER_CONCURRENCY: '0' },
    logger: pino({ level: 'warn' }, sink),
  });
  api = client(svc.base);
});
afterAll(async () => {
  await svc?.stop();
  await dbh?.drop();
});

const q = async (sql: string, values: unknown[] = []) => (await dbh.db.query(sql, values)).rows;
const i2v = (extra: Record<string, unknown> = {}) => ({
  modelId: 'rendergate/image-to-video',
  inputs: { prompt: 'a harbour', image: 'http://127.0.0.1:9/x.png', ...extra },
});
let n = 0;
const create = (key: string, body: unknown) =>
  api.call('POST', '/v1/generations', { key, body, headers: { 'idempotency-key': `s-${++n}` } });

/** An account with `cents`, a live key and a test key, neither limited by rate. */
async function account(cents: number) {
  const a = await api.account(cents, { rateLimitPerMinute: 1_000_000 });
  const t = await api.admin('POST', `/accounts/${a.accountId}/keys`, {
    mode: 'test',
    rateLimitPerMinute: 1_000_000,
  });
  return { ...a, live: a.key, test: t.key as string };
}

describe('test renders', () => {
  it('share one stored object per content: deleting or expiring one render leaves the others whole', async () => {
    const { db, storage } = svc.running.infra;
    const a = await account(0);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create(a.test, i2v({ duration: 5 }))).json.id);
    const other = (await create(a.test, i2v({ duration: 10 }))).json.id as string;
    for (const id of [...ids, other])
      expect((await api.waitFinal(a.test, id)).status).toBe('succeeded');
    const keys = await q('SELECT id, content_key FROM generations WHERE id = ANY ($1)', [
      [...ids, other],
    ]);
    const keyOf = (id: string) => keys.find((r) => r.id === id)!.content_key as string;
    const shared = keyOf(ids[0]);
    expect(shared).toMatch(/^test-outputs\/[0-9a-f]{64}\.mp4$/);
    expect(ids.map(keyOf)).toEqual([shared, shared, shared]);
    expect(keyOf(other)).not.toBe(shared); // another duration: other bytes, another object
    const file = path.join(svc.dataDir, 'files', shared);

    const get = (id: string, headers: Record<string, string> = {}) =>
      fetch(`${svc.base}/v1/generations/${id}/content`, {
        headers: { authorization: `Bearer ${a.test}`, ...headers },
      });
    const whole = Buffer.from(await (await get(ids[0])).arrayBuffer());
    expect(whole.length).toBeGreaterThan(200);
    const sameFile = async (id: string) => {
      const all = await get(id);
      expect(all.status).toBe(200);
      expect(Buffer.from(await all.arrayBuffer()).equals(whole)).toBe(true);
      const part = await get(id, { range: 'bytes=100-199' });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 100-199/${whole.length}`);
      expect(Buffer.from(await part.arrayBuffer()).equals(whole.subarray(100, 200))).toBe(true);
    };

    // Deleting one: its row forgets the key, the object stays for the others.
    expect((await api.call('DELETE', `/v1/generations/${ids[0]}`, { key: a.test })).status).toBe(
      200,
    );
    expect(fs.existsSync(file)).toBe(true);
    await sameFile(ids[1]);
    // Expiring one: 410 for it, the object stays for the last one.
    await db.query(
      `UPDATE generations SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [ids[1]],
    );
    expect(await janitor(db, storage).expireOutputs()).toBeGreaterThanOrEqual(1);
    expect((await get(ids[1])).status).toBe(410);
    expect(fs.existsSync(file)).toBe(true);
    await sameFile(ids[2]);

    // The sweep, even asked for no minimum age, keeps an object a row names, however old.
    const old = new Date(Date.now() - ORPHAN_MIN_AGE_MS - 60_000);
    fs.utimesSync(file, old, old);
    expect(await removeOrphans(db, storage, 0)).not.toContain(shared);
    await sameFile(ids[2]);
    // The last row deleted: nothing names it, but a young object is kept (a batch may be naming it).
    expect((await api.call('DELETE', `/v1/generations/${ids[2]}`, { key: a.test })).status).toBe(
      200,
    );
    const now = new Date();
    fs.utimesSync(file, now, now);
    expect(await removeOrphans(db, storage, 0)).not.toContain(shared);
    expect(fs.existsSync(file)).toBe(true);
    // Old and named by no row: removed. (Aged by hand here: the process that put it names it only
    // within half that age of its put, so this test makes no more renders of that content.)
    fs.utimesSync(file, old, old);
    expect(await removeOrphans(db, storage, 0)).toContain(shared);
    expect(fs.existsSync(file)).toBe(false);
    // The other content is untouched.
    expect((await get(other)).status).toBe(200);
  });

  it('race live creates on the same accounts with no deadlock: every create answered, every render final', async () => {
    const accounts = await Promise.all(Array.from({ length: 4 }, () => account(1_000_000)));
    // Two accounts' test endpoints take `generation.succeeded`: their test renders are recorded after
    // their create, by the batches of queue/test-render.ts; the others' are mostly created final
    // (migrations/019), one of them despite a live endpoint taking that event (migrations/025).
    const rx = await webhookReceiver();
    try {
      for (const [i, a] of accounts.slice(0, 3).entries()) {
        const ep = await api.call('POST', '/v1/webhook-endpoints', {
          key: i < 2 ? a.test : a.live,
          body: { url: rx.url('/ok'), events: ['generation.succeeded'] },
        });
        expect(ep.status).toBe(201);
      }
      const warnedBefore = warnings.length;
      // Two rounds: before the cause was fixed, about every other round had creates answered 500 (40P01).
      for (let round = 0; round < 2; round++) await race(accounts);
      expect(warnings.slice(warnedBefore)).toEqual([]);
      // Both paths were taken: renders recorded by a change of their own, and renders created final.
      const paths = await q(
        `SELECT g.xmin::text = i.xmin::text AS one_write, count(*)::int AS n FROM generations g
         JOIN idempotency_keys i ON i.generation_id = g.id
         WHERE g.account_id = ANY ($1) AND g.mode = 'test' AND g.status = 'succeeded' GROUP BY 1 ORDER BY 1`,
        [accounts.map((a) => a.accountId)],
      );
      expect(paths.map((r) => r.one_write)).toEqual([false, true]);
    } finally {
      await rx.close();
    }
    await checkInvariants(dbh.db);
  });
});

async function race(accounts: Awaited<ReturnType<typeof account>>[]) {
  // Test creates (some failing, which gives back the key's day), live creates, and cancels and
  // DELETEs of test renders, all at once on the same four accounts and their keys.
  const made = await Promise.all(
    Array.from({ length: 240 }, async (_, i) => {
      const a = accounts[i % accounts.length];
      const live = i % 3 === 0;
      const failing = !live && i % 7 === 0;
      const r = await create(
        live ? a.live : a.test,
        i2v({ duration: i % 2 ? 5 : 10, ...(failing ? { prompt: 'x rendergate:fail' } : {}) }),
      );
      const cancelled =
        !live && !failing && i % 5 === 0 && r.status === 202
          ? await api.call('POST', `/v1/generations/${r.json.id}/cancel`, { key: a.test })
          : null;
      const deleted =
        !live && !failing && !cancelled && i % 11 === 0 && r.status === 202
          ? await api.call('DELETE', `/v1/generations/${r.json.id}`, { key: a.test })
          : null;
      return { a, live, failing, cancelled, deleted, r };
    }),
  );
  expect(made.map((m) => m.r.status)).toEqual(Array(240).fill(202));
  // A cancel either came first (refunded) or found the render made already (409).
  for (const { cancelled: c } of made) {
    if (!c) continue;
    expect([200, 409]).toContain(c.status);
    if (c.status === 200) expect(c.json.status).toBe('refunded');
    else expect(c.json.code).toBe('GENERATION_NOT_CANCELLABLE');
  }
  for (const { deleted } of made) if (deleted) expect(deleted.status).toBe(200);
  const tests = made.filter((m) => !m.live && !m.deleted);
  const finals = await Promise.all(tests.map((m) => api.waitFinal(m.a.test, m.r.json.id)));
  for (const [i, g] of finals.entries()) {
    const m = tests[i];
    if (m.failing) expect(g).toMatchObject({ status: 'refunded', error: { code: 'MODEL_FAILED' } });
    else if (m.cancelled?.json.status === 'refunded')
      expect(g).toMatchObject({ status: 'refunded', error: { code: 'CANCELLED' } });
    else expect(g.status).toBe('succeeded');
  }
  // Live renders wait for a worker (none here), charged once each; test ones moved no money.
  for (const a of accounts) {
    const charges = await q(
      `SELECT count(*)::int AS n FROM ledger_entries l JOIN generations g ON g.id = l.generation_id
         WHERE l.account_id = $1 AND l.kind = 'charge' AND g.id = ANY ($2)`,
      [a.accountId, made.map((m) => m.r.json.id)],
    );
    expect(charges[0].n).toBe(made.filter((m) => m.live && m.a === a).length);
  }
}
