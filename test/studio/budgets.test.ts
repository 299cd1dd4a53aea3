// The Budgets part of the Usage page (docs/studio.md "Usage"): budgets shown as spent of limit, set
// and removed by form, the low-balance alert saved; a bad amount or period is a 400 page that
// writes nothing.
import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { StudioSession } from './http-session.ts';

const f = serviceFixture({ role: 'api' });
const TEXT = { modelId: 'rendergate/shot-list', inputs: { text: 'A gull lands. The tide turns.' } };

it('sets, shows as spent of limit, and removes budgets; refuses bad input writing nothing', async () => {
  const owner = new StudioSession(f.svc.base);
  const email = await owner.signUp();
  const { rows } = await f.dbh.db.query('SELECT id FROM accounts WHERE email = $1', [email]);
  const account = rows[0].id as string;
  await f.api.admin('POST', `/accounts/${account}/credits`, { amountCents: 10_000 });
  await owner.get('/keys');
  const made = await owner.post('/keys', { name: 'ci' });
  const key = /id="new-key" readonly value="([^"]+)"/.exec(made.text)![1];
  const keyId = (await f.dbh.db.query("SELECT id FROM api_keys WHERE name = 'ci'")).rows[0].id;

  let page = await owner.get('/usage');
  expect(page.text).toContain('<h2 id="budgets-h">Budgets</h2>');
  expect(page.text).toContain('No budgets.');
  for (const form of [
    { whose: 'account', period: 'week', limit: '-1' },
    { whose: 'account', period: 'week', limit: '10000000000' },
    { whose: 'account', period: 'year', limit: '5' },
    { whose: 'nobody', period: 'week', limit: '5' },
  ]) {
    const r = await owner.post('/usage/budgets', form);
    expect([form, r.status]).toEqual([form, 400]);
  }
  const key404 = await owner.post('/usage/budgets', {
    whose: `key:key_${'0'.repeat(32)}`,
    period: 'day',
    limit: '5',
  });
  expect(key404.status).toBe(404);
  for (const lowBalance of ['abc', '-2', '100.01'])
    expect((await owner.post('/usage/low-balance', { lowBalance })).status).toBe(400);
  expect(
    (await f.dbh.db.query('SELECT 1 FROM budgets WHERE account_id = $1', [account])).rowCount,
  ).toBe(0);

  expect(
    (await owner.post('/usage/budgets', { whose: 'account', period: 'month', limit: '12.50' }))
      .status,
  ).toBe(303);
  expect(
    (await owner.post('/usage/budgets', { whose: `key:${keyId}`, period: 'day', limit: '3' }))
      .status,
  ).toBe(303);
  expect((await owner.post('/usage/low-balance', { lowBalance: '20' })).status).toBe(303);
  const r = await f.api.call('POST', '/v1/generations', {
    key,
    body: TEXT,
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(r.status).toBe(202);
  const spent = `€${(r.json.costCents / 100).toFixed(2)}`;
  page = await owner.get('/usage');
  expect(page.text).toContain(`${spent} of €12.50`);
  expect(page.text).toContain(`${spent} of €3.00`);
  expect(page.text).toMatch(/id="low-balance"[^>]*value="20.00"/);
  expect(
    (await owner.post('/usage/budgets/remove', { whose: `key:${keyId}`, period: 'day' })).status,
  ).toBe(303);
  page = await owner.get('/usage');
  expect(page.text).not.toContain('of €3.00');
  const audit = await f.dbh.db.query(
    "SELECT action FROM audit_events WHERE account_id = $1 AND action IN ('budget.changed', 'alert.changed')",
    [account],
  );
  expect(audit.rows.map((x) => x.action).sort()).toEqual([
    'alert.changed',
    'budget.changed',
    'budget.changed',
    'budget.changed',
  ]);
});
