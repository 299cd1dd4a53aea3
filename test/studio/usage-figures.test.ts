// The Usage page's figures are kept between visits (src/studio/usage-figures.ts), and never shown
// older than the request: a new render, a charge, a refund each show on the next visit, and another
// account or another range never gets them.
import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { waitFor } from '../helpers/wait.ts';
import { StudioSession } from './http-session.ts';

const f = serviceFixture();

/** The rows of the page's "Per key" table: label, renders, spent. */
function perKey(html: string): string[][] {
  const table = /<caption>Per key,[\s\S]*?<\/table>/.exec(html)![0];
  return [
    ...table.matchAll(/<tr><th scope="row">(.*?)<\/th><td>(\d+)<\/td><td>(.*?)<\/td><\/tr>/g),
  ].map((m) => [m[1], m[2], m[3]]);
}

it('a charge and a refund show on the next visit; other accounts and ranges have their own', async () => {
  const s = new StudioSession(f.svc.base);
  const email = await s.signUp();
  const { rows } = await f.dbh.db.query('SELECT id FROM accounts WHERE email = $1', [email]);
  const account = rows[0].id as string;
  await f.api.admin('POST', `/accounts/${account}/credits`, { amountCents: 1_000 });
  const made = await f.api.admin('POST', `/accounts/${account}/keys`, { name: 'ci' });
  const key = made.key as string;
  const today = new Date().toISOString().slice(0, 10);
  const usage = async () => perKey((await s.get(`/usage?from=${today}&to=${today}`)).text);
  expect(await usage()).toEqual([]);
  expect(await usage()).toEqual([]);

  const create = async () => {
    const r = await f.api.call('POST', '/v1/generations', {
      key,
      body: { modelId: 'rendergate/shot-list', inputs: { text: 'The tide turns. A gull lands.' } },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    expect(r.status).toBe(202);
    return r.json as { id: string; costCents: number };
  };
  const first = await create();
  const euros = (c: number) => `€${(c / 100).toFixed(2)}`;
  const label = `ci (${made.start as string}…)`;
  expect(await usage()).toEqual([[label, '1', euros(first.costCents)]]);
  await create();
  expect(await usage()).toEqual([[label, '2', euros(2 * first.costCents)]]);

  // a refund moves no render and adds no key: the ledger's entry is what tells
  await waitFor('the first render to finish', async () => {
    const g = await f.api.call('GET', `/v1/generations/${first.id}`, { key });
    return g.json.status === 'succeeded';
  });
  const refund = await f.api.admin('POST', `/generations/${first.id}/refund`, {});
  expect(refund.status).toBe('refunded');
  expect(await usage()).toEqual([[label, '2', euros(first.costCents)]]);

  // another range, and another account, are figured on their own
  expect(perKey((await s.get(`/usage?from=2020-01-01&to=2020-01-31`)).text)).toEqual([]);
  const other = new StudioSession(f.svc.base);
  await other.signUp();
  expect(perKey((await other.get(`/usage?from=${today}&to=${today}`)).text)).toEqual([]);
});
