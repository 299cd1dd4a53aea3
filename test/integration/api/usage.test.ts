// GET /v1/usage (docs/api.md "Usage"): renders and spend of a key's account and mode over whole days
// of the day's time zone, grouped by day, model, key and member; equal to the ledger under concurrent
// creates and cancels; every bad parameter a 400 naming it; and read through its own index.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { StudioSession } from '../../studio/http-session.ts';
import { usageStatement } from '../../../src/db/usage.ts';
import { Rendergate, RendergateError } from '../../../packages/client/src/index.ts';
import { checkedFetch } from '../../helpers/openapi-check.ts';

// No workers: live renders stay queued (charged) until a cancel refunds them, so every number here
// is known in advance. Tokyo has no daylight saving time: its days start at 15:00 UTC.
const f = serviceFixture({
  env: { RENDERGATE_WORKER_CONCURRENCY: '0', RENDERGATE_DAY_TIMEZONE: 'Asia/Tokyo' },
});
const TEXT = 'rendergate/shot-list';
const VIDEO = 'rendergate/image-to-video';
const text = { text: 'A lighthouse at dusk.' };

const create = async (key: string, modelId: string, inputs: object) => {
  const r = await f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId, inputs },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(r.status, r.text).toBe(202);
  return r.json as { id: string; costCents: number };
};
const usage = async (key: string, query = '') => {
  const r = await f.api.call('GET', `/v1/usage${query}`, { key });
  expect(r.status, r.text).toBe(200);
  return r.json as { from: string; to: string; data: Record<string, unknown>[] };
};
const tokyoToday = () =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Tokyo' }).format(new Date());
const shiftDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/** An account signed up in the studio (its email is its studio user), with credit and keys. */
async function studioAccount(cents: number) {
  const s = new StudioSession(f.svc.base);
  const email = await s.signUp();
  const { rows } = await f.dbh.db.query('SELECT id FROM accounts WHERE email = $1', [email]);
  const accountId = rows[0].id as string;
  await f.api.admin('POST', `/accounts/${accountId}/credits`, { amountCents: cents });
  const key = async (o: object) =>
    (await f.api.admin('POST', `/accounts/${accountId}/keys`, o)) as { id: string; key: string };
  await s.get(`/models/${TEXT}`);
  return { s, email, accountId, key };
}

describe('GET /v1/usage', () => {
  it('groups by key, model, member and day; test keys see test usage only', async () => {
    const a = await studioAccount(5_000);
    const [k1, k2, t] = [
      await a.key({ name: 'one' }),
      await a.key({}),
      await a.key({ mode: 'test' }),
    ];
    const image = f.img.url('/a.png');
    const g1 = await create(k1.key, TEXT, text);
    const g2 = await create(k1.key, TEXT, text);
    const v = await create(k2.key, VIDEO, { prompt: 'push in', image, duration: 10 });
    // a cancelled render counts as a render, but its charge was returned
    expect(
      (await f.api.call('POST', `/v1/generations/${g2.id}/cancel`, { key: k1.key })).status,
    ).toBe(200);
    const studio = await a.s.post(`/models/${TEXT}`, {
      ...text,
      mode: 'summary',
      max_items: '5',
      _idem: crypto.randomUUID(),
    });
    expect(studio.status).toBe(303);
    await create(t.key, TEXT, text);
    const failing = await create(t.key, TEXT, { text: 'rendergate:fail now' });
    expect((await f.api.waitFinal(t.key, failing.id)).status).toBe('refunded');

    const today = tokyoToday();
    const total = await usage(k1.key);
    expect(total).toEqual({
      from: shiftDays(today, -29),
      to: today,
      data: [{ renders: 4, spentCents: g1.costCents + v.costCents + g1.costCents }],
    });
    const byKey = await usage(k2.key, '?groupBy=key');
    const [first, second] = [k1, k2].sort((x, y) => (x.id < y.id ? -1 : 1));
    const spentOf = (k: { id: string }) => (k === k1 ? g1.costCents : v.costCents);
    expect(byKey.data).toEqual([
      { keyId: first.id, renders: first === k1 ? 2 : 1, spentCents: spentOf(first) },
      { keyId: second.id, renders: second === k1 ? 2 : 1, spentCents: spentOf(second) },
      { keyId: null, renders: 1, spentCents: g1.costCents }, // the studio's, last
    ]);
    expect((await usage(k1.key, '?groupBy=model,member')).data).toEqual(
      [
        { modelId: VIDEO, member: null, renders: 1, spentCents: v.costCents },
        { modelId: TEXT, member: a.email, renders: 1, spentCents: g1.costCents },
        { modelId: TEXT, member: null, renders: 2, spentCents: g1.costCents },
      ].sort((x, y) => (x.modelId < y.modelId ? -1 : x.modelId > y.modelId ? 1 : 0)),
    );
    expect((await usage(k1.key, '?groupBy=day')).data).toEqual([
      { day: today, renders: 4, spentCents: 2 * g1.costCents + v.costCents },
    ]);
    // the test key: its own renders at their prices, the failed one returned; no live ones
    expect((await usage(t.key, '?groupBy=key, model')).data).toEqual([
      { keyId: t.id, modelId: TEXT, renders: 2, spentCents: g1.costCents },
    ]);
    // the live numbers are the ledger's: charges less refunds
    const ledger = (await f.api.admin('GET', `/accounts/${a.accountId}/ledger?limit=100`)).data as {
      kind: string;
      amountCents: number;
    }[];
    const net = ledger.reduce(
      (s, e) =>
        s + (e.kind === 'charge' ? e.amountCents : e.kind === 'refund' ? -e.amountCents : 0),
      0,
    );
    expect(total.data[0].spentCents).toBe(net);
    // a deleted render still counts (a queued one would be refunded first: this one was cancelled)
    expect((await f.api.call('DELETE', `/v1/generations/${g2.id}`, { key: k1.key })).status).toBe(
      200,
    );
    expect((await usage(k1.key)).data).toEqual(total.data);
  });

  it("counts whole days of the day's time zone, from and to included", async () => {
    const a = await f.api.account(1_000);
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await create(a.key, TEXT, text)).id);
    // Tokyo's 2026-03-01 runs from 2026-02-28T15:00Z to 2026-03-01T15:00Z
    const at = [
      '2026-02-28T14:59:59.999Z', // Feb 28 in Tokyo
      '2026-02-28T15:00:00Z', // Mar 1, its first instant
      '2026-03-01T14:59:59.999Z', // Mar 1, its last instant
      '2026-03-01T15:00:00Z', // Mar 2
    ];
    for (const [i, id] of ids.entries())
      await f.dbh.db.query('UPDATE generations SET created_at = $2 WHERE id = $1', [id, at[i]]);
    const one = await usage(a.key, '?from=2026-03-01&to=2026-03-01&groupBy=day');
    expect(one).toMatchObject({ from: '2026-03-01', to: '2026-03-01' });
    expect(one.data).toEqual([{ day: '2026-03-01', renders: 2, spentCents: 2 }]);
    expect((await usage(a.key, '?from=2026-02-01&to=2026-03-31&groupBy=day')).data).toEqual([
      { day: '2026-02-28', renders: 1, spentCents: 1 },
      { day: '2026-03-01', renders: 2, spentCents: 2 },
      { day: '2026-03-02', renders: 1, spentCents: 1 },
    ]);
    // a range with nothing in it: the totals are zero, a grouping has no rows
    expect((await usage(a.key, '?from=2025-03-01&to=2026-02-27')).data).toEqual([
      { renders: 0, spentCents: 0 },
    ]);
    expect((await usage(a.key, '?from=2025-03-01&to=2026-02-27&groupBy=model')).data).toEqual([]);
    // 366 days is the most
    expect((await usage(a.key, '?from=2025-03-01&to=2026-03-01')).data).toEqual([
      { renders: 3, spentCents: 3 },
    ]);
  });

  it('refuses every bad parameter with 400 INVALID_INPUT naming it', async () => {
    const a = await f.api.account(0);
    const cases: [string, string, RegExp][] = [
      ['?from=2026-02-30', 'from', /calendar date/],
      ['?from=yesterday', 'from', /YYYY-MM-DD/],
      ['?to=2026-1-1', 'to', /YYYY-MM-DD/],
      ['?from=2026-03-02&to=2026-03-01', 'from', /must not be after to \(2026-03-01\)/],
      ['?from=2025-03-01&to=2026-03-02', 'from', /367 days; at most 366/],
      ['?groupBy=week', 'groupBy', /"week" is not one of day, model, key, member/],
      ['?groupBy=day,day', 'groupBy', /day is given twice/],
      ['?groupBy=', 'groupBy', /"" is not one of/],
      ['?groupBy=day&groupBy=model', 'groupBy', /give it once/],
      ['?from=2026-01-01&from=2026-01-02', 'from', /give it once/],
    ];
    for (const [query, field, message] of cases) {
      const r = await f.api.call('GET', `/v1/usage${query}`, { key: a.key });
      expect(r.status, query).toBe(400);
      expect(r.json.code, query).toBe('INVALID_INPUT');
      expect(r.json.details[0].field, query).toBe(field);
      expect(r.json.message, query).toMatch(message);
    }
    // both dates bad: both named
    const both = await f.api.call('GET', '/v1/usage?from=x&to=y', { key: a.key });
    expect(both.json.details.map((d: { field: string }) => d.field)).toEqual(['from', 'to']);
    expect((await f.api.call('GET', '/v1/usage')).json.code).toBe('API_KEY_MISSING');
  });

  it("the TypeScript SDK's usage() asks for a range and groups, and reads the answer", async () => {
    const a = await f.api.account(100);
    const rg = new Rendergate({
      apiKey: a.key,
      baseUrl: f.svc.base,
      fetch: checkedFetch(f.svc.base),
    });
    await rg.generations.create(TEXT, text);
    const today = tokyoToday();
    expect(await rg.usage({ from: today, to: today, groupBy: ['model', 'key'] })).toEqual({
      from: today,
      to: today,
      data: [{ modelId: TEXT, keyId: a.keyId, renders: 1, spentCents: 1 }],
    });
    expect((await rg.usage({ groupBy: [] })).data).toEqual([{ renders: 1, spentCents: 1 }]);
    const e = await rg.usage({ from: '2026-13-01' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RendergateError);
    expect(e).toMatchObject({ status: 400, code: 'INVALID_INPUT', details: [{ field: 'from' }] });
  });

  it('equals the ledger while creates and cancels race', async () => {
    const a = await f.api.account(100_000);
    const made = await Promise.all(Array.from({ length: 40 }, () => create(a.key, TEXT, text)));
    const reads = Promise.all(Array.from({ length: 10 }, () => usage(a.key)));
    await Promise.all(
      made
        .filter((_, i) => i % 3 === 0)
        .map((g) => f.api.call('POST', `/v1/generations/${g.id}/cancel`, { key: a.key })),
    );
    for (const r of await reads) expect(r.data[0].renders).toBe(40);
    const me = (await f.api.call('GET', '/v1/me', { key: a.key })).json;
    expect((await usage(a.key)).data).toEqual([
      { renders: 40, spentCents: 100_000 - me.balanceCents },
    ]);
    await checkInvariants(f.dbh.db);
  });

  it("reads one account's range through generations_usage, without the table", async () => {
    const a = await f.api.account(0);
    // 33,000 renders spread over two years and every account of the file, about 3,000 of them this one's
    await f.dbh.db.query(
      `INSERT INTO generations (id, account_id, model_id, inputs, status, cost_cents, text_output,
                                created_at, completed_at, deadline_at)
       SELECT 'gen_' || md5(i::text), CASE WHEN i % 11 = 0 THEN $1 ELSE o.id END, $2, '{}', 'succeeded',
              1, 'x', now() - (i % 730) * interval '1 day', now(), now()
         FROM generate_series(1, 33000) i
         JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM accounts) o
           ON o.n = i % (SELECT count(*) FROM accounts)`,
      [a.accountId, TEXT],
    );
    await f.dbh.db.query('VACUUM ANALYZE generations');
    const to = tokyoToday();
    const from = shiftDays(to, -365);
    const plan = await f.dbh.db.query(`EXPLAIN (FORMAT JSON) ${usageStatement(['model'])}`, [
      a.accountId,
      'live',
      from,
      to,
      'Asia/Tokyo',
    ]);
    const text = JSON.stringify(plan.rows[0]['QUERY PLAN']);
    expect(text).toContain('"Index Name":"generations_usage"');
    expect(text).toContain('Index Only Scan');
    const year = await usage(a.key, `?from=${from}&to=${to}&groupBy=model`);
    expect(year.data[0].renders).toBeGreaterThan(1000);
  });
});
