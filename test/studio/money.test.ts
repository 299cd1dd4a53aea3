// Money through the studio: renders from the studio and from the API racing on one balance (and the key's
// daily cap) keep every invariant; a form sent many times at once, or again later, charges once.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { checkInvariants } from '../helpers/invariants.ts';
import { StudioSession } from './http-session.ts';

// No workers: renders stay queued, so the money moves only through the creates under test.
const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '0' } });
const TEXT = 'rendergate/shot-list';
const inputs = { text: 'A lighthouse at dusk.' };

async function signedUpWithKey(cents: number, keyOpts: Record<string, unknown> = {}) {
  const s = new StudioSession(f.svc.base);
  const email = await s.signUp();
  const { rows } = await f.dbh.db.query('SELECT id FROM accounts WHERE email = $1', [email]);
  const accountId = rows[0].id as string;
  if (cents > 0)
    await f.api.admin('POST', `/accounts/${accountId}/credits`, { amountCents: cents });
  const key = (await f.api.admin('POST', `/accounts/${accountId}/keys`, keyOpts)).key as string;
  await s.get('/models/rendergate/shot-list');
  return { s, accountId, key };
}

const studioRender = (s: StudioSession, idem: string = crypto.randomUUID()) =>
  s.post('/models/rendergate/shot-list', {
    ...inputs,
    mode: 'summary',
    max_items: '5',
    _idem: idem,
  });
const apiRender = (key: string) =>
  f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId: TEXT, inputs },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });

describe('studio money', () => {
  it('studio and API renders racing on one balance and one daily cap: exactly what the balance covers, the cap holds for the key', async () => {
    const probe = await f.api.account(0);
    const cost = (
      await f.api.call('POST', '/v1/quote', { key: probe.key, body: { modelId: TEXT, inputs } })
    ).json.costCents as number;
    expect(cost).toBeGreaterThan(0);
    const { s, accountId, key } = await signedUpWithKey(cost * 10, { dailyCapCents: cost * 4 });
    const [studio, api] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, () => studioRender(s))),
      Promise.all(Array.from({ length: 20 }, () => apiRender(key))),
    ]);
    const studioMade = studio.filter((r) => r.status === 303).length;
    const apiMade = api.filter((r) => r.status === 202).length;
    expect(studio.filter((r) => r.status !== 303).map((r) => r.status)).toEqual(
      Array(20 - studioMade).fill(402),
    );
    for (const r of api.filter((x) => x.status !== 202))
      expect(['INSUFFICIENT_BALANCE', 'API_KEY_DAILY_CAP']).toContain(r.json.code);
    expect(studioMade + apiMade).toBe(10);
    expect(apiMade).toBeLessThanOrEqual(4);
    const { rows } = await f.dbh.db.query(
      `SELECT (SELECT balance_cents FROM accounts WHERE id = $1) AS balance,
              (SELECT count(*)::int FROM generations WHERE account_id = $1 AND key_id IS NULL AND usage_day IS NOT NULL) AS studio,
              (SELECT coalesce(sum(spent_cents), 0)::int FROM key_day_usage u JOIN api_keys k ON k.id = u.key_id WHERE k.account_id = $1) AS key_spent`,
      [accountId],
    );
    expect(rows[0]).toEqual({ balance: 0, studio: studioMade, key_spent: apiMade * cost });
    // The studio's renders are the account's generations on the API too.
    const listed = await f.api.call('GET', '/v1/generations?limit=100', { key });
    expect(listed.json.data).toHaveLength(10);
    await checkInvariants(f.dbh.db);
  });

  it("a member's budget holds their studio renders exactly, and names who started them", async () => {
    const probe = await f.api.account(0);
    const cost = (
      await f.api.call('POST', '/v1/quote', { key: probe.key, body: { modelId: TEXT, inputs } })
    ).json.costCents as number;
    const { s, accountId } = await signedUpWithKey(cost * 100);
    const person = (
      await f.dbh.db.query('SELECT person_id FROM memberships WHERE account_id = $1', [accountId])
    ).rows[0].person_id as string;
    await f.api.admin('PUT', `/accounts/${accountId}/members/${person}/budgets/week`, {
      limitCents: cost * 3,
    });
    const rs = await Promise.all(Array.from({ length: 12 }, () => studioRender(s)));
    expect(rs.filter((r) => r.status === 303)).toHaveLength(3);
    const refused = rs.filter((r) => r.status !== 303);
    expect(new Set(refused.map((r) => r.status))).toEqual(new Set([409]));
    expect(refused[0].text).toContain('budget');
    const { rows } = await f.dbh.db.query(
      'SELECT count(*)::int AS n FROM generations WHERE account_id = $1 AND started_by = $2',
      [accountId, person],
    );
    expect(rows[0].n).toBe(3);
    await checkInvariants(f.dbh.db);
  });

  it('a form sent ten times at once, and once more later, makes one generation and one charge', async () => {
    const { s, accountId } = await signedUpWithKey(10_000);
    const idem = crypto.randomUUID();
    const rs = await Promise.all(Array.from({ length: 10 }, () => studioRender(s, idem)));
    expect(rs.map((r) => r.status)).toEqual(Array(10).fill(303));
    const targets = new Set(rs.map((r) => r.location));
    expect(targets.size).toBe(1);
    const again = await studioRender(s, idem);
    expect(again.location).toBe([...targets][0]);
    const { rows } = await f.dbh.db.query(
      `SELECT (SELECT count(*)::int FROM generations WHERE account_id = $1) AS gens,
              (SELECT count(*)::int FROM ledger_entries WHERE account_id = $1 AND kind = 'charge') AS charges`,
      [accountId],
    );
    expect(rows[0]).toEqual({ gens: 1, charges: 1 });
    // The same form with other inputs is refused rather than charged again or silently replayed.
    const changed = await s.post('/models/rendergate/shot-list', {
      text: 'Something else.',
      _idem: idem,
    });
    expect(changed.status).toBe(409);
    await checkInvariants(f.dbh.db);
  });
});
