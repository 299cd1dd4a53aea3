// The Members page and the account switcher in a browser (docs/studio.md "Members"): a person
// joins a second account by its link, switches between their accounts from the header, invites and
// changes a role with the page's own controls; at 360 and 1280 px each page fits and passes axe.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { serviceFixture } from '../helpers/fixture.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { checkPage, PASSWORD, signUp, uniqueEmail } from './helpers.ts';
import { StudioSession } from './http-session.ts';

const f = serviceFixture();
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** On a phone the header's menu is folded: open it, as a person would. */
async function openMenu(page: Page) {
  const toggle = page.getByRole('button', { name: 'Menu' });
  if (await toggle.isVisible()) await toggle.click();
}

describe('the Members page and the account switcher', () => {
  for (const width of [360, 1280])
    it(`joins a second account, invites and switches accounts at ${width} px`, async () => {
      const context = await browser.newContext({
        baseURL: f.svc.base,
        viewport: { width, height: 800 },
      });
      const page = await context.newPage();
      page.on('dialog', (d) => void d.accept());
      const email = await signUp(page);
      // another person's account invites this one, as an admin
      const other = new StudioSession(f.svc.base);
      const otherEmail = await other.signUp();
      await other.get('/members');
      const made = await other.post('/members/invite', { email, role: 'admin' });
      const link = /id="invite-link" readonly value="([^"]+)"/.exec(made.text)![1];
      await page.goto(new URL(link).pathname);
      await checkPage(page, `join at ${width}`);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in and join' }).click();
      await page.getByText('Balance').waitFor();
      await page.goto('/members');
      await expect
        .poll(() => page.getByLabel('Account', { exact: true }).inputValue())
        .toMatch(/^acct_/);
      expect(await page.getByRole('rowheader', { name: otherEmail }).count()).toBe(1);
      await checkPage(page, `members at ${width}`);
      // an admin invites; the page shows the link (no mail here)
      const invited = uniqueEmail();
      await page.getByLabel('Email', { exact: true }).fill(invited);
      await page.getByLabel('Role', { exact: true }).selectOption('developer');
      await page.getByRole('button', { name: 'Invite', exact: true }).click();
      await page.getByText(`Invited ${invited} as developer.`).waitFor();
      await checkPage(page, `members after an invite at ${width}`);
      // switch to their own account: the header's switcher, on any page
      await page.goto('/members');
      const own = await page
        .getByLabel('Account', { exact: true })
        .locator('option', { hasText: email })
        .getAttribute('value');
      await openMenu(page);
      await page.getByLabel('Account', { exact: true }).selectOption(own);
      await page.getByRole('button', { name: 'Switch' }).click();
      await page.waitForURL('**/members');
      expect(await page.getByRole('rowheader', { name: `${email} (you)` }).count()).toBe(1);
      expect(await page.getByRole('rowheader', { name: otherEmail }).count()).toBe(0);
      await context.close();
    }, 120_000);
});
