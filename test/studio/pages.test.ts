// Qualities people notice: the first page is small and served by us alone (no CDN), every page works by
// keyboard and fits a phone's width. (choose.test.ts takes docs/studio.md's screenshots.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { serviceFixture } from '../helpers/fixture.ts';
import { freshPage, launchBrowser } from '../helpers/browser.ts';
import { accountIdOf, PASSWORD, signUp, uniqueEmail } from './helpers.ts';

const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '2' } });
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** Presses Tab until `target` has the focus, as a keyboard user reaches it; fails if it never does. */
async function tabTo(page: Page, target: Locator) {
  for (let i = 0; i < 40; i++) {
    if (await target.evaluate((el) => el === document.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error('never reached by Tab');
}

describe('studio pages', () => {
  it('serves the first page in under 100 KB, every byte from our own origin', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    const sizes: { url: string; bytes: number }[] = [];
    page.on('response', async (r) => {
      sizes.push({ url: r.url(), bytes: (await r.body().catch(() => Buffer.alloc(0))).length });
    });
    await page.goto('/', { waitUntil: 'networkidle' });
    expect(new URL(page.url()).pathname).toBe('/signin');
    expect(sizes.every((s) => s.url.startsWith(f.svc.base))).toBe(true);
    const total = sizes.reduce((n, s) => n + s.bytes, 0);
    expect(total).toBeGreaterThan(1000);
    expect(total).toBeLessThan(100 * 1024);
    await context.close();
  });

  it('signs up and renders by keyboard alone', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    await page.goto('/signup');
    await tabTo(page, page.getByLabel('Email'));
    await page.keyboard.type(uniqueEmail());
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByText('Balance').waitFor();
    await tabTo(page, page.getByRole('link', { name: 'Shot list' }));
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Shot list', exact: true }).waitFor();
    await tabTo(page, page.getByLabel('Text', { exact: true }));
    await page.keyboard.type('Typed with the keyboard.');
    await tabTo(page, page.getByRole('button', { name: 'Render' }));
    await page.keyboard.press('Enter');
    await page.getByText(/Render started|This render costs/).waitFor();
    await context.close();
  });

  it('fits a phone: no page scrolls sideways at 360 px', async () => {
    const context = await browser.newContext({
      baseURL: f.svc.base,
      viewport: { width: 360, height: 740 },
      isMobile: true,
      hasTouch: true,
    });
    const page = await context.newPage();
    page.on('dialog', (d) => void d.accept());
    const email = await signUp(page);
    await f.api.admin('POST', `/accounts/${await accountIdOf(f.dbh.db, email)}/credits`, {
      amountCents: 5_000,
    });
    await page.goto('/models/rendergate/shot-list');
    await page.getByLabel('Text', { exact: true }).fill('A phone-sized render.');
    await page.getByRole('button', { name: 'Render' }).click();
    await page.locator('pre.text-output').waitFor({ timeout: 60_000 });
    for (const p of [
      '/',
      '/models/rendergate/start-end-to-video',
      '/history',
      '/keys',
      '/usage',
      '/account',
    ]) {
      await page.goto(p);
      const [scroll, width] = await page.evaluate(() => [
        document.documentElement.scrollWidth,
        window.innerWidth,
      ]);
      expect(scroll, p).toBeLessThanOrEqual(width);
    }
    await context.close();
  });
});
