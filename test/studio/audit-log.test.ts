// The studio's Audit log page in a real Chromium (docs/api.md "Audit log"): reached from the menu,
// newest first, filtered by action and by member, paged like History, its CSV downloaded; at 1280
// and 360 px it passes axe and never scrolls sideways, as every other page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { serviceFixture } from '../helpers/fixture.ts';
import { freshPage, launchBrowser } from '../helpers/browser.ts';
import { accountIdOf, signUp } from './helpers.ts';

const f = serviceFixture();
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function accessible(page: Page) {
  const axe = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'])
    .analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual(
    [],
  );
  const [scroll, width] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    window.innerWidth,
  ]);
  expect(scroll).toBeLessThanOrEqual(width);
}

describe('the Audit log page', () => {
  it('lists, filters, pages and exports the events; accessible at 1280 and 360 px', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    await page.setViewportSize({ width: 1280, height: 900 });
    const email = await signUp(page);
    const acct = await accountIdOf(f.dbh.db, email);
    // 54 events: the sign-up, 52 operator credits, then a key made in the studio
    for (let i = 0; i < 52; i++)
      await f.api.admin('POST', `/accounts/${acct}/credits`, { amountCents: 100 + i });
    await page.goto('/keys');
    await page.getByLabel('Name').fill('=cmd|calc');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Key created: copy it now').waitFor();
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const rows = page.locator('table.audit tbody tr');
    expect(await rows.count()).toBe(50);
    expect(await rows.first().textContent()).toContain('key.created');
    expect(await rows.first().textContent()).toContain(email);
    await accessible(page);

    await page.getByRole('link', { name: 'Older events' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    expect(await rows.count()).toBe(4);
    expect(await rows.last().textContent()).toContain('session.signed_in');

    await page.getByLabel('Action').selectOption('credit.added');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/action=credit\.added/);
    expect(await rows.count()).toBe(50);
    expect(await rows.first().textContent()).toContain('the operator');
    expect(await rows.first().textContent()).toContain('amountCents: 151');
    await page.getByLabel('Member').selectOption({ label: email });
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No events match these filters.').waitFor();

    const download = page.waitForEvent('download');
    await page.goto('/audit?action=key.created');
    await page.getByRole('link', { name: 'Export CSV' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('audit-log.csv');
    const csv = await (await import('node:fs/promises')).readFile(await file.path(), 'utf8');
    const lines = csv.trimEnd().split('\r\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('""name"":""=cmd|calc""');

    await page.goto('/audit');
    await page.setViewportSize({ width: 360, height: 740 });
    await accessible(page);
    await context.close();
  });
});
