// Money under concurrency: many parallel requests against the real service and database, each scenario
// ending with the invariant check (Σ ledger = balance, one charge per generation, refunds exact, caps).
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ADMIN } from '../../helpers/service.ts';
import { queueDrained } from '../../helpers/db.ts';
import { serviceFixture } from '../../helpers/fixture.ts';
import { checkInvariants } from '../../helpers/invariants.ts';

const TEXT = 'rendergate/shot-list';
const VIDEO = 'rendergate/image-to-video';
const text = {
  text: 'Rendergate prices every render before it runs. A failed render is refunded. Clients poll until the end.',
};

const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '2' } });

const create = (key: string, modelId: string, inputs: object, idem: string = crypto.randomUUID()) =>
  f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId, inputs },
    headers: { 'idempotency-key': idem },
  });
const price = async (key: string, modelId: string, inputs: object) =>
  (await f.api.call('POST', '/v1/quote', { key, body: { modelId, inputs } })).json
    .costCents as number;
const drain = () => queueDrained(f.dbh.db);

describe('POST /generations under concurrency', () => {
  it('50 parallel creates on a balance that covers exactly 7: 7 accepted, 43 refused with 402', async () => {
    const probe = await f.api.account(0);
    const cost = await price(probe.key, TEXT, text);
    const a = await f.api.account(cost * 7);
    const rs = await Promise.all(Array.from({ length: 50 }, () => create(a.key, TEXT, text)));
    expect(rs.filter((r) => r.status === 202)).toHaveLength(7);
    expect(
      rs.filter((r) => r.status === 402 && r.json.code === 'INSUFFICIENT_BALANCE'),
    ).toHaveLength(43);
    expect((await f.api.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(0);
    await drain();
    await checkInvariants(f.dbh.db);
  });

  it('20 parallel requests with one Idempotency-Key make one charge and one generation', async () => {
    const a = await f.api.account(100_000);
    const idem = crypto.randomUUID();
    const rs = await Promise.all(Array.from({ length: 20 }, () => create(a.key, TEXT, text, idem)));
    const ok = rs.filter((r) => r.status === 202);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.json.id)).size).toBe(1);
    expect(ok.filter((r) => r.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    for (const r of rs.filter((x) => x.status !== 202))
      expect([r.status, r.json.code]).toEqual([409, 'IDEMPOTENCY_KEY_IN_USE']);
    const { rows } = await f.dbh.db.query(
      'SELECT count(*)::int AS n FROM generations WHERE account_id = $1',
      [a.accountId],
    );
    expect(rows[0].n).toBe(1);
    const again = await create(a.key, TEXT, text, idem);
    expect([again.status, again.headers.get('idempotent-replayed'), again.json]).toEqual([
      202,
      'true',
      ok[0].json,
    ]);
    await drain();
    await checkInvariants(f.dbh.db);
  });

  it('parallel creates against a daily cap accept exactly what fits', async () => {
    const probe = await f.api.account(0);
    const cost = await price(probe.key, TEXT, text);
    const a = await f.api.account(1_000_000, { dailyCapCents: cost * 5 });
    const rs = await Promise.all(Array.from({ length: 30 }, () => create(a.key, TEXT, text)));
    expect(rs.filter((r) => r.status === 202)).toHaveLength(5);
    const capped = rs.filter((r) => r.status === 409);
    expect(capped).toHaveLength(25);
    expect(capped[0].json.code).toBe('API_KEY_DAILY_CAP');
    expect(capped[0].json.details[0]).toMatchObject({
      capCents: cost * 5,
      spentTodayCents: cost * 5,
      costCents: cost,
    });
    const resets = new Date(capped[0].json.details[0].resetsAt);
    expect(resets.getUTCHours()).toBe(0);
    expect(resets.getTime()).toBeGreaterThan(Date.now());
    expect(resets.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
    await drain();
    await checkInvariants(f.dbh.db);
  });
});

describe('races on the way out of queued', () => {
  it('DELETE racing the worker’s completion moves money once', async () => {
    const a = await f.api.account(1_000_000);
    const created = await Promise.all(Array.from({ length: 30 }, () => create(a.key, TEXT, text)));
    await Promise.all(
      created.map(async (r, i) => {
        await new Promise((s) => setTimeout(s, i * 7));
        const d = await f.api.call('DELETE', `/v1/generations/${r.json.id}`, { key: a.key });
        expect(d.status).toBe(200);
      }),
    );
    await drain();
    const { rows } = await f.dbh.db.query(
      'SELECT status, deleted_at FROM generations WHERE account_id = $1',
      [a.accountId],
    );
    expect(
      rows.every(
        (r) => r.deleted_at !== null && (r.status === 'succeeded' || r.status === 'refunded'),
      ),
    ).toBe(true);
    await checkInvariants(f.dbh.db);
  });

  it('a cancel racing a failing render refunds once', async () => {
    const a = await f.api.account(1_000_000);
    const created = await Promise.all(
      Array.from({ length: 12 }, () =>
        create(a.key, VIDEO, { prompt: 'p', image: f.img.url('/missing.png') }),
      ),
    );
    await Promise.all(
      created.map(async (r, i) => {
        await new Promise((s) => setTimeout(s, i * 15));
        await f.api.call('DELETE', `/v1/generations/${r.json.id}`, { key: a.key });
      }),
    );
    await drain();
    const { rows } = await f.dbh.db.query('SELECT status FROM generations WHERE account_id = $1', [
      a.accountId,
    ]);
    expect(rows.every((r) => r.status === 'failed' || r.status === 'refunded')).toBe(true);
    expect((await f.api.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(1_000_000);
    await checkInvariants(f.dbh.db);
  });

  it('an operator refund racing a DELETE, and a double refund, return the charge once', async () => {
    const a = await f.api.account(1_000_000);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await create(a.key, TEXT, text)).json.id);
    for (const id of ids) expect((await f.api.waitFinal(a.key, id))?.status).toBe('succeeded');
    const results = await Promise.all(
      ids.flatMap((id) => [
        f.api.call('POST', `/admin/v1/generations/${id}/refund`, { key: ADMIN }),
        f.api.call('POST', `/admin/v1/generations/${id}/refund`, { key: ADMIN }),
        f.api.call('DELETE', `/v1/generations/${id}`, { key: a.key }),
      ]),
    );
    for (let i = 0; i < ids.length; i++) {
      const [r1, r2] = results.slice(i * 3, i * 3 + 2);
      expect([r1.status, r2.status].filter((s) => s === 200).length).toBeLessThanOrEqual(1);
      for (const r of [r1, r2])
        if (r.status !== 200)
          expect(['GENERATION_NOT_REFUNDABLE', 'GENERATION_NOT_FOUND']).toContain(r.json.code);
    }
    await checkInvariants(f.dbh.db);
  });
});
