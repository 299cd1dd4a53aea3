// The pages of this round's billing in a real Chromium at 360 px, each checked for fit and axe
// (helpers.ts checkPage): an account at €0 told on Models and Usage how to get credit and offered
// a test key; Add credit's auto-recharge, a card saved through the stand-in's setup page; Usage's
// Receipts with a receipt to download.
import { describe, expect, it } from 'vitest';
import { client } from '../helpers/service.ts';
import { stripeStudio } from './stripe-studio.ts';
import { waitFor } from '../helpers/wait.ts';
import { accountIdOf, checkPage, signUp } from './helpers.ts';

const s = stripeStudio();

describe('billing pages at 360 px', () => {
  it('help at €0, auto-recharge with a saved card, receipts', async () => {
    const context = await s.browser.newContext({
      baseURL: s.svc.base,
      viewport: { width: 360, height: 740 },
      acceptDownloads: true,
    });
    const page = await context.newPage();
    try {
      const email = await signUp(page);
      await page.goto('/');
      await page.getByRole('heading', { name: 'No credit yet: €0.00' }).waitFor();
      await checkPage(page, 'Models at €0');
      await page.getByRole('link', { name: 'create a test key' }).click();
      await expect(page.getByLabel('Mode').inputValue()).resolves.toBe('test');
      await page.goto('/usage');
      await page.getByRole('heading', { name: 'No credit yet: €0.00' }).waitFor();
      await page.getByRole('link', { name: 'buy credit by card' }).waitFor();
      await checkPage(page, 'Usage at €0');

      await page.goto('/credit');
      await checkPage(page, 'Add credit without a card');
      await page.getByRole('button', { name: 'Save a card' }).click();
      await page.getByRole('heading', { name: 'Save a card' }).waitFor();
      await page.getByRole('button', { name: 'Save card' }).click();
      await page.waitForURL(/\/credit\?card=saving/);
      // Saved once Stripe's event has arrived: the page shows it on a later load.
      await waitFor('the card shown', async () => {
        await page.reload();
        return (await page.getByText('visa ending in 4242').count()) > 0;
      });
      await checkPage(page, 'Add credit with a card');

      const api = client(s.svc.base);
      const accountId = await accountIdOf(s.dbh.db, email);
      await api.admin('POST', `/accounts/${accountId}/credits`, { amountCents: 2500 });
      await page.getByLabel('Recharge below (€)').fill('5');
      await page.getByLabel('Recharge amount (€)').selectOption('1000');
      await page.getByLabel('Auto-recharge on').check();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Auto-recharge settings saved').waitFor();

      await page.goto('/usage');
      const link = page.getByRole('link', { name: /^R-\d{4}-\d{6}/ });
      await link.waitFor();
      expect(await page.getByRole('heading', { name: 'No credit yet: €0.00' }).count()).toBe(0);
      await checkPage(page, 'Usage with a receipt');
      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
      expect(download.suggestedFilename()).toMatch(/^R-\d{4}-\d{6}\.pdf$/);
    } finally {
      await context.close();
    }
  });
});
