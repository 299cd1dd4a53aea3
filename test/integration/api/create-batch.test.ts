// Creates are committed in batches (src/ledger/create-batch.ts, the SQL function in src/ledger/sql/).
// A batch must decide each create exactly as if it were alone: exact balances and caps per account
// and key, idempotency across batches and within one, refusals that touch nothing, no deadlock with
// refunds or with the batches of another API process, and one round trip for many creates.
import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { client, startTestService } from '../../helpers/service.ts';
import { checkInvariants } from '../../helpers/invariants.ts';

const f = serviceFixture({ role: 'api' });
const TEXT = {
  modelId: 'rendergate/shot-list',
  inputs: { text: 'A gull lands. The tide turns. Night falls on the harbour.' },
};

type Api = ReturnType<typeof client>;
const create = (api: Api, key: string, idem: string = crypto.randomUUID(), body: object = TEXT) =>
  api.call('POST', '/v1/generations', { key, body, headers: { 'idempotency-key': idem } });

async function cost(): Promise<number> {
  const probe = await f.api.account(0);
  return (await f.api.call('POST', '/v1/quote', { key: probe.key, body: TEXT })).json.costCents;
}

/** Counts calls of the batch statement on the service's pool. */
function countBatches(): () => number {
  const pool = f.svc.running.infra.db as unknown as { query: (...a: any[]) => any };
  const query = pool.query;
  let n = 0;
  pool.query = function (this: unknown, ...args: any[]) {
    if ((args[0] as { name?: string })?.name === 'gen-create-batch') n++;
    return query.apply(this, args);
  };
  return () => n;
}

it('400 parallel creates over two API processes, six accounts and twelve keys: every balance and cap exact', async () => {
  const c = await cost();
  const second = await startTestService(f.dbh.url, { role: 'api' });
  try {
    const apis = [f.api, client(second.base)];
    // Accounts whose balance covers 5, 10 … 30 creates; each with a capped key (4 creates a day) and an uncapped one.
    const accounts = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const a = await f.api.account(c * 5 * (i + 1), { dailyCapCents: c * 4 });
        const open = await f.api.admin('POST', `/accounts/${a.accountId}/keys`, {});
        return { ...a, keys: [a.key, open.key as string], covers: 5 * (i + 1) };
      }),
    );
    const sent = accounts.flatMap((a) =>
      Array.from({ length: 66 }, (_, j) => ({ a, key: a.keys[j % 2] })),
    );
    const rs = await Promise.all(sent.map(({ key }, i) => create(apis[i % 2], key)));
    expect(rs.filter((r) => r.status >= 500)).toEqual([]);
    for (const a of accounts) {
      const mine = rs.filter((_, i) => sent[i].a === a);
      const capped = rs.filter(
        (r, i) => sent[i].a === a && sent[i].key === a.keys[0] && r.status === 202,
      ).length;
      const accepted = mine.filter((r) => r.status === 202).length;
      expect(capped).toBeLessThanOrEqual(4);
      // The uncapped key takes whatever the balance leaves: all of it is spent.
      expect(accepted).toBe(a.covers);
      expect(
        mine.filter((r) => r.status === 402).length + mine.filter((r) => r.status === 409).length,
      ).toBe(66 - a.covers);
      expect((await f.api.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(0);
    }
    await checkInvariants(f.dbh.db);
  } finally {
    await second.stop();
  }
});

it('one Idempotency-Key sent 30 times at once through two processes: one generation, one charge, replays or 409s', async () => {
  const second = await startTestService(f.dbh.url, { role: 'api' });
  try {
    const apis = [f.api, client(second.base)];
    const a = await f.api.account(100_000);
    const idem = crypto.randomUUID();
    const rs = await Promise.all(
      Array.from({ length: 30 }, (_, i) => create(apis[i % 2], a.key, idem)),
    );
    const ok = rs.filter((r) => r.status === 202);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.json.id)).size).toBe(1);
    expect(ok.filter((r) => r.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    for (const r of rs.filter((x) => x.status !== 202))
      expect([r.status, r.json.code]).toEqual([409, 'IDEMPOTENCY_KEY_IN_USE']);
    // A different body with the key is refused: REUSED, or IN_USE while another of them holds the key.
    const otherBody = { ...TEXT, inputs: { text: 'Something else entirely.' } };
    const other = await Promise.all(
      Array.from({ length: 5 }, () => create(f.api, a.key, idem, otherBody)),
    );
    expect(other.map((r) => r.json.code)).toContain('IDEMPOTENCY_KEY_REUSED');
    for (const r of other)
      expect(['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_IN_USE']).toContain(r.json.code);
    expect((await create(f.api, a.key, idem, otherBody)).json.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const { rows } = await f.dbh.db.query(
      'SELECT count(*)::int AS n FROM generations WHERE account_id = $1',
      [a.accountId],
    );
    expect(rows[0].n).toBe(1);
    await checkInvariants(f.dbh.db);
  } finally {
    await second.stop();
  }
});

it('a refused create in a batch does not hold back its key: the same key then succeeds', async () => {
  const c = await cost();
  const a = await f.api.account(c);
  const idem = crypto.randomUUID();
  const rs = await Promise.all(Array.from({ length: 10 }, () => create(f.api, a.key)));
  expect(rs.filter((r) => r.status === 202)).toHaveLength(1);
  const refused = await create(f.api, a.key, idem);
  expect([refused.status, refused.json.code]).toEqual([402, 'INSUFFICIENT_BALANCE']);
  await f.api.admin('POST', `/accounts/${a.accountId}/credits`, { amountCents: c });
  expect((await create(f.api, a.key, idem)).status).toBe(202);
  await checkInvariants(f.dbh.db);
});

it('creates racing cancellations (refunds) on the same accounts and keys never deadlock', async () => {
  const a = await f.api.account(1_000_000, { dailyCapCents: 1_000_000 });
  const first = await Promise.all(Array.from({ length: 40 }, () => create(f.api, a.key)));
  const ids = first.map((r) => r.json.id as string);
  const rs = await Promise.all([
    ...ids.map((id) => f.api.call('DELETE', `/v1/generations/${id}`, { key: a.key })),
    ...Array.from({ length: 80 }, () => create(f.api, a.key)),
  ]);
  expect(rs.filter((r) => r.status >= 400).map((r) => r.text)).toEqual([]);
  await checkInvariants(f.dbh.db);
});

it('concurrent creates share round trips', async () => {
  const batches = countBatches();
  const a = await f.api.account(1_000_000);
  const rs = await Promise.all(Array.from({ length: 120 }, () => create(f.api, a.key)));
  expect(rs.every((r) => r.status === 202)).toBe(true);
  expect(batches()).toBeLessThan(60);
  // Alone, a create goes at once in a batch of one.
  const before = batches();
  expect((await create(f.api, a.key)).status).toBe(202);
  expect(batches()).toBe(before + 1);
});

it('creates batched together take distinct places in their models’ queues, after those waiting', async () => {
  // two models no other test here queues (nothing renders: role api)
  const VIDEO = {
    modelId: 'rendergate/image-to-video',
    inputs: { prompt: 'A lighthouse at dusk', image: 'https://example.com/a.png' },
  };
  const ENDS = {
    modelId: 'rendergate/start-end-to-video',
    inputs: {
      prompt: 'dawn',
      image: 'https://example.com/a.png',
      last_image: 'https://example.com/b.png',
      duration: 3,
      resolution: '540p',
    },
  };
  const waiting = async (model: string) =>
    (
      await f.dbh.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM generations
          WHERE model_id = $1 AND status = 'queued' AND started_at IS NULL`,
        [model],
      )
    ).rows[0].n;
  const before = { ends: await waiting(ENDS.modelId), video: await waiting(VIDEO.modelId) };
  // the places counted stop at 100: the queues must leave room for what follows
  expect(before.ends + 30).toBeLessThan(100);
  expect(before.video + 30).toBeLessThan(100);
  const batches = countBatches();
  const a = await f.api.account(1_000_000);
  const bodies = Array.from({ length: 60 }, (_, i) => (i % 2 ? VIDEO : ENDS));
  const rs = await Promise.all(bodies.map((body) => create(f.api, a.key, undefined, body)));
  expect(rs.map((r) => r.status)).toEqual(bodies.map(() => 202));
  expect(batches()).toBeLessThan(30); // several creates per batch, several models per batch
  const places = (body: object, from: number) =>
    expect(
      rs
        .filter((_, i) => bodies[i] === body)
        .map((r) => r.json.queuePosition as number)
        .sort((x, y) => x - y),
    ).toEqual(Array.from({ length: 30 }, (_, i) => from + i + 1));
  places(ENDS, before.ends);
  places(VIDEO, before.video);
});
