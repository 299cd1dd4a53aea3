// The browser flow of a top-up (docs/billing.md), in a real Chromium: Add credit → Stripe's Checkout page
// (the stand-in of test/fakes/stripe.ts, on another origin, which the page's CSP must allow as a
// form-action for the redirect) → Pay → back on the success page, which shows the new balance once
// Stripe's signed event has credited it.
import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../helpers/invariants.ts';
import { freshPage } from '../helpers/browser.ts';
import { stripeStudio } from './stripe-studio.ts';
import { signUp } from './helpers.ts';

const s = stripeStudio();

describe('Add credit in the browser', () => {
  it('goes from Add credit through Checkout to the new balance', async () => {
    const { context, page } = await freshPage(s.browser, s.svc.base);
    const blocked: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
    });
    try {
      await signUp(page);
      await expect(page.locator('#balance strong').textContent()).resolves.toBe('€0.00');
      await page.getByRole('link', { name: 'Add credit' }).click();
      await page.getByLabel('€20.00').check();
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      // Stripe's page, on Stripe's origin.
      await page.getByRole('heading', { name: 'Pay €20.00' }).waitFor();
      expect(new URL(page.url()).origin).toBe(s.fake.base);
      await page.getByRole('button', { name: 'Pay' }).click();
      // Back on our success page, which waited for the event Stripe sends after the redirect.
      await page.getByText('€20.00 was added').waitFor({ timeout: 60_000 });
      expect(new URL(page.url()).pathname).toBe('/credit/success');
      await expect(page.locator('#balance strong').textContent()).resolves.toBe('€20.00');
      await expect(page.getByRole('status').textContent()).resolves.toContain(
        'Your balance is now €20.00',
      );
      expect(blocked).toEqual([]);
      await checkInvariants(s.dbh.db);
    } finally {
      await context.close();
    }
  });

  it('comes back from a cancelled payment saying nothing was charged', async () => {
    const { context, page } = await freshPage(s.browser, s.svc.base);
    try {
      await signUp(page);
      const session = [...s.fake.sessions.values()].at(-1);
      await page.goto(`/credit?cancelled=1&from=${session.id}`);
      await page.getByText('The payment was cancelled; nothing was charged.').waitFor();
      await expect(page.locator('#balance strong').textContent()).resolves.toBe('€0.00');
    } finally {
      await context.close();
    }
  });
});
