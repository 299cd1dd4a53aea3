// Qualities people notice: the first page is small and served by us alone (no CDN), every page works by
// keyboard and fits a phone's width. With UPDATE_SCREENSHOTS=1 this file also refreshes docs/studio.md's
// screenshots (docs/screenshots/).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { serviceFixture } from '../helpers/fixture.ts';
import { freshPage, launchBrowser } from '../helpers/browser.ts';
import { accountIdOf, PASSWORD, signUp, uniqueEmail } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';

const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '2' } });
let browser: Browser;
beforeAll(async () => { browser = await launchBrowser(); });
afterAll(async () => { await browser?.close(); });

const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/screenshots') : null;
const shot = async (page: Page, name: string) => { if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true }); };

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
    page.on('response', async (r) => { sizes.push({ url: r.url(), bytes: (await r.body().catch(() => Buffer.alloc(0))).length }); });
    await page.goto('/', { waitUntil: 'networkidle' });
    expect(new URL(page.url()).pathname).toBe('/signin');
    await shot(page, 'sign-in');
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
    await page.getByRole('heading', { name: 'Shot list' }).waitFor();
    await tabTo(page, page.getByLabel('text', { exact: true }));
    await page.keyboard.type('Typed with the keyboard.');
    await tabTo(page, page.getByRole('button', { name: 'Render' }));
    await page.keyboard.press('Enter');
    await page.getByText(/Render started|This render costs/).waitFor();
    await context.close();
  });

  it('fits a phone: no page scrolls sideways at 360 px', async () => {
    const context = await browser.newContext({ baseURL: f.svc.base, viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    page.on('dialog', (d) => void d.accept());
    const email = await signUp(page);
    await f.api.admin('POST', `/accounts/${await accountIdOf(f.dbh.db, email)}/credits`, { amountCents: 5_000 });
    await page.goto('/models/rendergate/shot-list');
    await page.getByLabel('text', { exact: true }).fill('A phone-sized render.');
    await page.getByRole('button', { name: 'Render' }).click();
    await page.locator('pre.text-output').waitFor({ timeout: 60_000 });
    for (const p of ['/', '/models/rendergate/start-end-to-video', '/history', '/keys', '/usage', '/account']) {
      await page.goto(p);
      const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      expect(scroll, p).toBeLessThanOrEqual(width);
    }
    await context.close();
  });

  it.runIf(SHOTS)('takes the screenshots of docs/studio.md', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    await page.setViewportSize({ width: 1100, height: 800 });
    const email = await signUp(page);
    const accountId = await accountIdOf(f.dbh.db, email);
    await f.api.admin('POST', `/accounts/${accountId}/credits`, { amountCents: 2_500, reason: 'Welcome credit' });
    await page.goto('/');
    await shot(page, 'models');
    await page.goto('/models/rendergate/image-to-video');
    await page.getByLabel('prompt', { exact: true }).fill('A slow push in on a lighthouse at dusk');
    await page.getByLabel('image', { exact: true }).fill(f.img.url('/a.png'));
    const preview = page.getByRole('img', { name: 'Preview of image' });
    await waitFor('the preview drawn', () => preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), { intervalMs: 50 });
    await shot(page, 'model-form');
    await page.getByRole('button', { name: 'Render' }).click();
    await page.locator('video').waitFor({ timeout: 90_000 });
    await page.goto('/models/rendergate/shot-list');
    await page.getByLabel('text', { exact: true }).fill('A lighthouse at dusk. Waves break on the rocks. A ship passes slowly in the fog.');
    await page.getByLabel('mode', { exact: true }).selectOption('shot_list');
    await page.getByRole('button', { name: 'Render' }).click();
    await page.locator('pre.text-output').waitFor({ timeout: 60_000 });
    await shot(page, 'history');
    await page.getByRole('link', { name: 'Shot list' }).first().click();
    await shot(page, 'generation');
    await page.goto('/keys');
    await page.getByLabel('Name').fill('production server');
    await page.getByLabel('Daily cap (€)').fill('5');
    await page.getByRole('button', { name: 'Create key' }).click();
    await shot(page, 'api-keys');
    await page.goto('/usage');
    await shot(page, 'usage');
    const op = await freshPage(browser, f.svc.base);
    await op.page.setViewportSize({ width: 1100, height: 800 });
    await op.page.goto('/admin');
    await op.page.getByLabel('Admin token').fill('test-admin-token-0123456789abcdef');
    await op.page.getByRole('button', { name: 'Sign in' }).click();
    await op.page.getByRole('link', { name: email }).click();
    await shot(op.page, 'admin-account');
    expect(fs.readdirSync(SHOTS!).filter((n) => n.endsWith('.png')).length).toBeGreaterThanOrEqual(8);
    await op.context.close();
    await context.close();
  });
});
