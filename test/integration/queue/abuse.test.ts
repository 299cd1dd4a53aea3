// Fairness under abuse (issue 11): an account whose renders point at an image server that sends one
// byte a second cannot hold every worker slot (the per-account running limit), and a slow address is
// not retried on every attempt (a fetch that times out twice fails the render for good).
import crypto from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { waitFor } from '../../helpers/wait.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let drip: http.Server;
let dripBase: string;

beforeAll(async () => {
  dbh = await freshDatabase();
  // A PNG's first bytes, one a second, never the rest.
  drip = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': '100000' });
    const t = setInterval(() => res.write(Buffer.from([0x89])), 1_000);
    res.on('close', () => clearInterval(t));
  });
  await new Promise<void>((r) => drip.listen(0, '127.0.0.1', r));
  dripBase = `http://127.0.0.1:${(drip.address() as { port: number }).port}`;
});
afterAll(async () => {
  drip.closeAllConnections();
  await new Promise((r) => drip.close(r));
  await dbh.drop();
});

const video = (c: ReturnType<typeof client>, key: string, i: number) =>
  c.call('POST', '/v1/generations', {
    key,
    body: {
      modelId: 'rendergate/image-to-video',
      inputs: { prompt: 'p', image: `${dripBase}/slow/${i}.png` },
    },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });

it('six slow renders of one account leave a worker slot for another account', async () => {
  // Two worker slots, one account may use one of them; fetches time out only after 30 s, so the
  // first attempts of the slow renders are all still running when the other account's render ends.
  const svc: TestService = await startTestService(dbh.url, {
    env: {
      RENDERGATE_WORKER_CONCURRENCY: '2',
      RENDERGATE_ACCOUNT_CONCURRENCY: '1',
      RENDERGATE_FETCH_TIMEOUT_SECONDS: '30',
    },
  });
  try {
    const c = client(svc.base);
    const abuser = await c.account(10_000);
    const other = await c.account(100);
    const slow = await Promise.all(Array.from({ length: 6 }, (_, i) => video(c, abuser.key, i)));
    expect(slow.every((r) => r.status === 202)).toBe(true);
    // wait until the abuser's renders hold what they can
    await waitFor(
      'a render of the abuser to start',
      async () => {
        const { rows } = await dbh.db.query(
          `SELECT count(*)::int AS n FROM generations WHERE account_id = $1 AND started_at IS NOT NULL`,
          [abuser.accountId],
        );
        return rows[0].n > 0;
      },
      { intervalMs: 50 },
    );
    const text = await c.call('POST', '/v1/generations', {
      key: other.key,
      body: {
        modelId: 'rendergate/shot-list',
        inputs: { text: 'A boat leaves the harbour. The sea is calm.' },
      },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    const done = await c.waitFinal(other.key, text.json.id);
    expect(done.status).toBe('succeeded');
    // When it ended, the abuser had one render running and no attempt had ended yet: the other account
    // never waited for a slow fetch to give up.
    const { rows } = await dbh.db.query(
      `SELECT count(*) FILTER (WHERE lease_until >= now())::int AS running, max(attempts)::int AS attempts,
              count(*) FILTER (WHERE status <> 'queued')::int AS final
       FROM generations WHERE account_id = $1`,
      [abuser.accountId],
    );
    expect(rows[0]).toEqual({ running: 1, attempts: 1, final: 0 });
  } finally {
    await svc.stop();
  }
});

it('a render whose input fetch times out twice fails for good and is refunded', async () => {
  const svc = await startTestService(dbh.url, { env: { RENDERGATE_FETCH_TIMEOUT_SECONDS: '1' } });
  try {
    const c = client(svc.base);
    const a = await c.account(1_000);
    const r = await video(c, a.key, 99);
    const g = await c.waitFinal(a.key, r.json.id);
    expect([g.status, g.error.code, g.refundedCents]).toEqual([
      'failed',
      'INPUT_FETCH_TIMEOUT',
      g.costCents,
    ]);
    const { rows } = await dbh.db.query(
      'SELECT attempts, fetch_timeouts FROM generations WHERE id = $1',
      [g.id],
    );
    expect(rows[0]).toEqual({ attempts: 2, fetch_timeouts: 1 }); // maxAttempts is 3: the third was not spent
    expect((await c.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(1_000);
    await checkInvariants(dbh.db);
  } finally {
    await svc.stop();
  }
});
