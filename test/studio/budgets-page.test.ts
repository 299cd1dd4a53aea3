// The Usage page's Budgets in a real browser, at 1280 and 360 px, checked by axe: a budget is set
// by its labelled form, shown as spent of limit in a table that fits a phone, and removed; the
// low-balance alert is saved by its label.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { serviceFixture } from '../helpers/fixture.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { accountIdOf, checkPage, signUp } from './helpers.ts';

const f = serviceFixture({ role: 'api' });
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

it('sets, shows and removes a budget, and saves the low-balance alert, on a phone and a desktop', async () => {
  for (const viewport of [
    { width: 1280, height: 900 },
    { width: 360, height: 740 },
  ]) {
    const context = await browser.newContext({ baseURL: f.svc.base, viewport });
    const page = await context.newPage();
    const email = await signUp(page);
    await f.api.admin('POST', `/accounts/${await accountIdOf(f.dbh.db, email)}/credits`, {
      amountCents: 5_000,
    });
    await page.goto('/usage');
    await page.getByLabel('Whose').selectOption('account');
    await page.getByLabel('Period').selectOption('month');
    await page.getByLabel('Limit (€)').fill('25');
    await page.getByRole('button', { name: 'Set budget' }).click();
    await page.getByText('€0.00 of €25.00').waitFor();
    await page.getByLabel('Low-balance alert (€)').fill('10');
    await page.getByRole('button', { name: 'Save alert' }).click();
    await expect.poll(() => page.getByLabel('Low-balance alert (€)').inputValue()).toBe('10.00');
    await checkPage(page, `/usage at ${viewport.width} px`);
    await page.getByRole('button', { name: 'Remove the month budget of The account' }).click();
    await page.getByText('No budgets.').waitFor();
    await context.close();
  }
});
