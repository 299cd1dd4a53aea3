// The Usage page's tables over a long range (src/studio/usage-table.ts): a table per month, each
// month's link showing its days, the range's last month shown by default; every amount the same as
// the days', and the page small enough for a year of 20 models. The kept HTML is made again after
// a charge (src/studio/usage-figures.ts).
import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { StudioSession } from './http-session.ts';

const f = serviceFixture();

/** A table's rows by id: the row's heading, then its cells' text. */
function rowsOf(html: string, id: string): string[][] {
  const table = new RegExp(`<table class="usage-days" id="${id}">[\\s\\S]*?</table>`).exec(html);
  if (!table) return [];
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table[0])![1];
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) =>
    [...m[1].matchAll(/<t[hd][^>]*>(?:<a [^>]*>)?(.*?)(?:<\/a>)?<\/t[hd]>/g)].map((c) => c[1]),
  );
}
const cents = (euros: string) => Math.round(Number(euros.replace('€', '')) * 100);

it('pages a year by month, each month summing its days, and a charge shows at once', async () => {
  const s = new StudioSession(f.svc.base);
  const email = await s.signUp();
  const { rows } = await f.dbh.db.query('SELECT id FROM accounts WHERE email = $1', [email]);
  const account = rows[0].id as string;
  // 20 models, each on every day of 2025, priced 1 to 20 cents
  await f.dbh.db.query(
    `INSERT INTO generations (id, account_id, model_id, inputs, status, cost_cents, text_output,
                              created_at, completed_at, deadline_at)
     SELECT 'gen_' || md5($1 || d || m), $1, 'm/' || lpad(m::text, 2, '0'), '{}', 'succeeded',
            m, 'x', (d + time '12:00') AT TIME ZONE 'UTC', now(), now()
       FROM generate_series(date '2025-01-01', date '2025-12-31', interval '1 day') d,
            generate_series(1, 20) m`,
    [account],
  );
  const year = (await s.get('/usage?from=2025-01-01&to=2025-12-31')).text;
  // a year of 20 models: the chart and its tables in well under the 168 KiB they once took
  expect(Buffer.byteLength(year)).toBeLessThan(60 * 1024);
  const months = rowsOf(year, 'usage-months');
  expect(months.map((r) => r[0])).toEqual(
    Array.from({ length: 12 }, (_, i) => `2025-${String(i + 1).padStart(2, '0')}`),
  );
  // January: 31 days × 210 cents
  expect(months[0].at(-1)).toBe('€65.10');
  expect(year).toContain(
    'href="/usage?from=2025-01-01&amp;to=2025-12-31&amp;month=2025-03#usage-days"',
  );
  // the last month's days by default
  const december = rowsOf(year, 'usage-days');
  expect(december.map((r) => r[0])).toEqual(
    Array.from({ length: 31 }, (_, i) => `2025-12-${String(i + 1).padStart(2, '0')}`),
  );
  // another month's days, summing to its row of the months' table, cell by cell
  const march = rowsOf(
    (await s.get('/usage?from=2025-01-01&to=2025-12-31&month=2025-03')).text,
    'usage-days',
  );
  expect(march).toHaveLength(31);
  expect(march[0][0]).toBe('2025-03-01');
  const sums = march[0].slice(1).map((_, c) => march.reduce((a, r) => a + cents(r[c + 1]), 0));
  expect(sums).toEqual(months[2].slice(1).map(cents));
  // a month outside the range, or not a month: the last one
  for (const m of ['2024-12', 'March'])
    expect(
      rowsOf(
        (await s.get(`/usage?from=2025-01-01&to=2025-12-31&month=${m}`)).text,
        'usage-days',
      )[0][0],
    ).toBe('2025-12-01');

  // a ledger cursor that is not one of ours: back to the page, whatever else was asked
  const odd = await s.get('/usage?from=2025-01-01&to=2025-12-31&cursor=not-a-cursor');
  expect([odd.status, odd.headers.get('location')]).toEqual([303, '/usage']);

  // a charge makes the kept tables again: today's month gains the render's price
  await f.api.admin('POST', `/accounts/${account}/credits`, { amountCents: 1_000 });
  const made = await f.api.admin('POST', `/accounts/${account}/keys`, { name: 'ci' });
  const today = new Date().toISOString().slice(0, 10);
  const from = `${today.slice(0, 4)}-01-01`;
  const path = `/usage?from=${from}&to=${today}`;
  const before = (await s.get(path)).text;
  expect(before).toContain('Nothing was spent from');
  const r = await f.api.call('POST', '/v1/generations', {
    key: made.key as string,
    body: { modelId: 'rendergate/shot-list', inputs: { text: 'The tide turns. A gull lands.' } },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(r.status).toBe(202);
  const after = (await s.get(path)).text;
  const price = `€${((r.json.costCents as number) / 100).toFixed(2)}`;
  const days = rowsOf(after, 'usage-days');
  expect(days.map((d) => [d[0], d.at(-1)])).toEqual([[today, price]]);
});
