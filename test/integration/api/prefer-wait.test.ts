// `Prefer: wait=N` (docs/api.md "Waiting instead of polling"): a held request is answered when the
// generation becomes final, woken by the change notification (not a polling loop), or when N seconds
// pass, or released when its client disconnects. 1,000 held requests on one process, memory measured.
import crypto from 'node:crypto';
import http from 'node:http';
import { expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { waitFor } from '../../helpers/wait.ts';

const f = serviceFixture({ role: 'api' }); // no worker: the tests finish renders themselves, through the database

const create = (key: string, headers: Record<string, string> = {}) =>
  f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId: 'rendergate/shot-list', inputs: { text: 'The tide turns. A gull lands.' } },
    headers: { 'idempotency-key': crypto.randomUUID(), ...headers },
  });
/** Finishes a render as a worker on another machine would. */
const finish = (id: string) =>
  f.dbh.db.query(
    `UPDATE generations SET status = 'succeeded', text_output = 'done', completed_at = now(), started_at = coalesce(started_at, now()) WHERE id = $1`,
    [id],
  );
const held = async () =>
  Number(
    /^rendergate_held_requests (\d+)$/m.exec(
      await (await fetch(`${f.svc.base}/metrics`)).text(),
    )![1],
  );
const heldAre = (n: number, timeoutMs?: number) =>
  waitFor(`${n} held requests`, async () => (await held()) === n, { timeoutMs });

it('a held GET is answered when the render becomes final, woken by the change, with Preference-Applied', async () => {
  const a = await f.api.account(10_000);
  const g = await create(a.key);
  const t0 = Date.now();
  const waiting = f.api.call('GET', `/v1/generations/${g.json.id}`, {
    key: a.key,
    headers: { prefer: 'wait=60' },
  });
  await heldAre(1);
  let answered = false;
  void waiting.then(() => {
    answered = true;
  });
  // still held after a later request's round trip: nothing changed, so nothing answered it
  expect(await held()).toBe(1);
  expect(answered).toBe(false);
  await finish(g.json.id);
  const changedAt = Date.now();
  const r = await waiting;
  const wokenMs = Date.now() - changedAt;
  expect(r.status).toBe(200);
  expect(r.headers.get('preference-applied')).toBe('wait=60');
  expect(r.json).toMatchObject({
    id: g.json.id,
    status: 'succeeded',
    textOutput: 'done',
    progress: 1,
    queuePosition: null,
  });
  // answered by the change, long before its 60 s (the time from change to answer is measured by the bench)
  expect(Date.now() - t0).toBeLessThan(30_000);
  console.log(`held GET answered ${wokenMs} ms after the change committed`);
  expect(await held()).toBe(0);
});

it('a held request answers at N seconds with the state then; a final one answers at once; other values are ignored', async () => {
  const a = await f.api.account(10_000);
  const g = await create(a.key);
  const r = await f.api.call('GET', `/v1/generations/${g.json.id}`, {
    key: a.key,
    headers: { prefer: 'respond-async, wait=1' },
  });
  expect([r.status, r.headers.get('preference-applied'), r.json.status]).toEqual([
    200,
    'wait=1',
    'queued',
  ]);
  expect(r.json.queuePosition).toBe(1);
  for (const prefer of ['wait=0', 'wait=61', 'wait=abc', 'wait', 'return=minimal']) {
    const x = await f.api.call('GET', `/v1/generations/${g.json.id}`, {
      key: a.key,
      headers: { prefer },
    });
    expect([prefer, x.status, x.headers.get('preference-applied')]).toEqual([prefer, 200, null]);
  }
  await finish(g.json.id);
  const done = await f.api.call('GET', `/v1/generations/${g.json.id}`, {
    key: a.key,
    headers: { prefer: 'wait=60' },
  });
  expect([done.headers.get('preference-applied'), done.json.status]).toEqual([
    'wait=60',
    'succeeded',
  ]);
  const gone = await f.api.call('GET', `/v1/generations/gen_${'0'.repeat(32)}`, {
    key: a.key,
    headers: { prefer: 'wait=5' },
  });
  expect(gone.json.code).toBe('GENERATION_NOT_FOUND');
});

it('a create with Prefer: wait is held too, and answers 202 with the current state (a replay as well)', async () => {
  const a = await f.api.account(10_000);
  const idem = crypto.randomUUID();
  const first = create(a.key, { prefer: 'wait=60', 'idempotency-key': idem });
  await heldAre(1);
  const { rows } = await f.dbh.db.query('SELECT id FROM generations WHERE account_id = $1', [
    a.accountId,
  ]);
  await finish(rows[0].id);
  const r = await first;
  expect([r.status, r.headers.get('preference-applied'), r.json.status]).toEqual([
    202,
    'wait=60',
    'succeeded',
  ]);
  const replay = await create(a.key, { prefer: 'wait=5', 'idempotency-key': idem });
  expect([replay.status, replay.headers.get('idempotent-replayed'), replay.json.status]).toEqual([
    202,
    'true',
    'succeeded',
  ]);
});

it('a client that disconnects releases its held request', async () => {
  const a = await f.api.account(10_000);
  const g = await create(a.key);
  const ac = new AbortController();
  const p = fetch(`${f.svc.base}/v1/generations/${g.json.id}`, {
    headers: { authorization: `Bearer ${a.key}`, prefer: 'wait=60' },
    signal: ac.signal,
  }).catch(() => 'aborted');
  await heldAre(1);
  ac.abort();
  expect(await p).toBe('aborted');
  await heldAre(0);
});

it('1,000 requests held at once on one process, all answered when the render ends; memory per held request measured', async () => {
  const a = await f.api.account(10_000, { rateLimitPerMinute: 100_000 });
  const g = await create(a.key);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  const path = `/v1/generations/${g.json.id}`;
  const answers = Array.from(
    { length: 1000 },
    () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.get(
          `${f.svc.base}${path}`,
          { agent, headers: { authorization: `Bearer ${a.key}`, prefer: 'wait=60' } },
          (res) => {
            let body = '';
            res
              .setEncoding('utf8')
              .on('data', (d) => {
                body += d;
              })
              .on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
        req.on('error', reject);
      }),
  );
  await heldAre(1000, 60_000);
  const during = process.memoryUsage().heapUsed;
  console.log(
    `1,000 held requests: heap +${((during - before) / 1024 / 1024).toFixed(1)} MiB in this process (client sockets included)`,
  );
  expect(during - before).toBeLessThan(200 * 1024 * 1024);
  await finish(g.json.id);
  const rs = await Promise.all(answers);
  expect(rs.every((r) => r.status === 200 && JSON.parse(r.body).status === 'succeeded')).toBe(true);
  expect(await held()).toBe(0);
  agent.destroy();
}, 120_000);
