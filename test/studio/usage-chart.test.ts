// The Usage page's chart in a real Chromium (docs/studio.md "Usage"): spend per day over the chosen
// range, stacked by model, an <svg role="img"> drawn on the server whose accessible name says what
// it shows, the same numbers in the table beside it, a range picker refusing more than 366 days;
// at 360 and 1280 px the page fits and passes axe.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { serviceFixture } from '../helpers/fixture.ts';
import { freshPage, launchBrowser } from '../helpers/browser.ts';
import { accountIdOf, checkPage, signUp } from './helpers.ts';
import { niceCeil, usageChart } from '../../src/studio/usage-chart.ts';

const f = serviceFixture();
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/**
 * Renders of `account`: on each of the days, model `m/NN` (NN from 1 to `models`) costing NN × 10
 * cents, once; on the first day model m/01 is also refunded 5 cents.
 */
async function seed(account: string, days: string[], models: number) {
  await f.dbh.db.query(
    `INSERT INTO generations (id, account_id, model_id, inputs, status, cost_cents, refunded_cents,
                              text_output, created_at, completed_at, deadline_at)
     SELECT 'gen_' || md5($1 || d || m), $1, 'm/' || lpad(m::text, 2, '0'), '{}', 'succeeded',
            m * 10, CASE WHEN d = $2::date AND m = 1 THEN 5 ELSE 0 END, 'x',
            (d + time '12:00') AT TIME ZONE 'UTC', now(), now()
       FROM unnest($3::date[]) d, generate_series(1, $4) m`,
    [account, days[0], days, models],
  );
}

describe('the Usage chart', () => {
  it('draws the range asked, as the table says; refuses over 366 days; fits 360 px', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    try {
      const email = await signUp(page);
      const account = await accountIdOf(f.dbh.db, email);
      await seed(account, ['2026-03-02', '2026-03-04', '2026-03-05'], 10);
      await page.goto('/usage');
      // exact: the chart's name, once drawn, is a label too
      await page.getByLabel('From', { exact: true }).fill('2026-03-01');
      await page.getByLabel('To', { exact: true }).fill('2026-03-07');
      await page.getByRole('button', { name: 'Show' }).click();
      const chart = page.getByRole('img', { name: /^Spend per day, 2026-03-01 to 2026-03-07,/ });
      await chart.waitFor();
      // 3 days × (10 + … + 100) cents = €16.50, less the 5 cents refunded
      expect(await chart.getAttribute('aria-labelledby')).toBe('usage-chart-title');
      const name = await page.locator('#usage-chart-title').textContent();
      expect(name).toContain('stacked by model: €16.45 in all, at most €5.50 on 2026-03-04.');
      // ten models: the seven largest and "Other models" (m/01 … m/03), eight series
      expect(await chart.locator('path').count()).toBe(8);
      const table = page.getByRole('table', { name: /Spend per day and model/ });
      const head = await table.locator('thead th').allTextContents();
      expect(head).toEqual([
        'Day',
        ...['m/10', 'm/09', 'm/08', 'm/07', 'm/06', 'm/05', 'm/04'],
        'Other models',
        'Total',
      ]);
      const rows = await table.locator('tbody tr').allTextContents();
      expect(rows).toHaveLength(3); // days with spend only
      const first = await table.locator('tbody tr').first().locator('td').allTextContents();
      expect(first).toEqual([
        ...['€1.00', '€0.90', '€0.80', '€0.70', '€0.60', '€0.50', '€0.40'],
        '€0.55', // 30 + 20 + 10 − 5
        '€5.45',
      ]);
      expect(await table.locator('tfoot td').last().textContent()).toBe('€16.45');
      await page.setViewportSize({ width: 1280, height: 900 });
      await checkPage(page, 'Usage at 1280 px');
      await page.setViewportSize({ width: 360, height: 740 });
      await checkPage(page, 'Usage at 360 px');
      const box = await chart.boundingBox();
      expect(box!.width).toBeLessThanOrEqual(360);
      expect(box!.width).toBeGreaterThan(250);

      // more than 366 days: a 400 page saying so, the picker kept
      const long = await page.goto('/usage?from=2025-01-01&to=2026-03-07');
      expect(long!.status()).toBe(400);
      await expect
        .poll(() => page.getByRole('alert').textContent())
        .toContain('is 431 days; at most 366');
      expect(await page.getByLabel('From', { exact: true }).inputValue()).toBe('2025-01-01');
      await checkPage(page, 'Usage refusing a range at 360 px');
      // a year: a table per month, a month's link showing its days (the last month's at first)
      await page.goto('/usage?from=2025-04-01&to=2026-03-31');
      const months = page.getByRole('table', { name: /Spend per month and model/ });
      expect(await months.locator('tbody tr').allTextContents()).toHaveLength(1);
      await page.getByRole('link', { name: '2026-03' }).click();
      await page.waitForURL(/month=2026-03/);
      const days = page.getByRole('table', { name: /Spend per day and model, 2026-03/ });
      expect(await days.locator('tbody tr').allTextContents()).toHaveLength(3);
      expect(await days.locator('tfoot td').last().textContent()).toBe('€16.45');
      await checkPage(page, 'Usage of a year at 360 px');
      // a range without spend says so, without an empty chart
      await page.goto('/usage?from=2026-01-01&to=2026-01-31');
      await page.getByText('Nothing was spent from 2026-01-01 to 2026-01-31.').waitFor();
      expect(await page.getByRole('img', { name: /Spend per day/ }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});

describe('the chart geometry', () => {
  it('puts a day of a year-long range in its slot, the axis top at a round amount', () => {
    expect([1, 99, 101, 240, 251, 999, 1001].map(niceCeil)).toEqual([
      1, 100, 200, 250, 500, 1000, 2000,
    ]);
    const c = usageChart(
      [
        { model: 'a', days: [0, 364], spent: [300, 100] },
        { model: 'b', days: [364], spent: [100] },
      ],
      '2025-01-01',
      '2025-12-31',
    );
    expect(c.ticks.map((t) => t.cents)).toEqual([0, 125, 250, 375, 500]);
    expect(c.rows.map((r) => [r.label, r.totalCents])).toEqual([
      ['2025-01-01', 300],
      ['2025-12-31', 200],
    ]);
    expect(c.dates.map((d) => d.day)).toEqual(['2025-01-01', '2025-07-02', '2025-12-31']);
    // each series one path of relative steps from the axis (y 460, 500 cents at y 20: 0.88 a
    // cent): up 300 cents on the first day (4 wide), along the axis, up on the last day to the
    // plot's right edge (1424) and back down. b's is the stack of a and b: 200 on the last day.
    expect(c.series.map((s) => s.d)).toEqual([
      'M144 460v-264h4v264h1272v-88h4v88Z',
      'M144 460v-264h4v264h1272v-176h4v176Z',
    ]);
    expect(c.plot.left + 4 + 1272 + 4).toBe(c.plot.left + c.plot.width);
  });

  it('steps a year of 20 models in a few bytes a day, keeps narrow ranges gapped bars', () => {
    const models = Array.from({ length: 20 }, (_, m) => ({
      model: `m/${m}`,
      days: Array.from({ length: 366 }, (_, d) => d),
      spent: Array.from({ length: 366 }, (_, d) => m + 1 + (d % 7)),
    }));
    const year = usageChart(models, '2025-01-01', '2026-01-01');
    expect(year.series).toHaveLength(8);
    const bytes = year.series.reduce((n, s) => n + s.d.length, 0);
    // a rectangle per day and series was about 20 bytes each: 58 KiB
    expect(bytes).toBeLessThan(8 * 366 * 9);
    for (const s of year.series) expect(s.d).toMatch(/^M\d+ \d+([hv]-?\d+)+Z$/);
    const week = usageChart([{ model: 'a', days: [1], spent: [100] }], '2025-01-01', '2025-01-07');
    // a gap either side of the one bar, back down to the axis after it
    expect(week.series[0].d).toBe('M144 460h201v-440h147v440h914Z');
  });
});
