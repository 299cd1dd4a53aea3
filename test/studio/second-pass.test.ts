// The studio's second pass (issue 43), in a real browser at 1280 and 360 px, each page checked
// by axe: cards with their example's media, choices by their labels, History by pages of 20 with
// stills and no players, a render's page titled by its model and prompt, the key list labelled on a phone,
// a Copy id on one line, date inputs of a date's width, and /docs with the studio's header.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { serviceFixture } from '../helpers/fixture.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { accountIdOf, signUp } from './helpers.ts';

const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '2' } });
const SIZES = [
  { width: 1280, height: 900 },
  { width: 360, height: 740 },
] as const;
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** No sideways scroll, and no serious or critical axe violation (outside RapiDoc's own element). */
async function checked(page: Page, label: string) {
  const [scroll, width] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    window.innerWidth,
  ]);
  expect(scroll, label).toBeLessThanOrEqual(width);
  const axe = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'])
    .exclude('rapi-doc')
    .analyze();
  const bad = axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(
    bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    label,
  ).toEqual([]);
}

describe('the studio, second pass', () => {
  for (const size of SIZES) {
    it(`at ${size.width} px: cards, labels, History, a render, keys, usage, docs`, async () => {
      const context = await browser.newContext({
        baseURL: f.svc.base,
        viewport: { width: size.width, height: size.height },
        ...(size.width < 600 ? { isMobile: true, hasTouch: true } : {}),
      });
      const page = await context.newPage();
      const email = await signUp(page);
      const accountId = await accountIdOf(f.dbh.db, email);
      await f.api.admin('POST', `/accounts/${accountId}/credits`, { amountCents: 5_000 });
      const { key } = await f.api.admin('POST', `/accounts/${accountId}/keys`, { name: 'Laptop' });

      // Models: each card shows its example's output.
      await page.goto('/');
      expect(await page.locator('li.card .cover').count()).toBe(
        await page.locator('li.card').count(),
      );
      expect(await page.locator('li.card .cover video').count()).toBeGreaterThan(0);
      await checked(page, `models at ${size.width}`);

      // Choices by their labels; the price says where the fields to fill are.
      await page.goto('/models/rendergate/shot-list');
      const mode = page.getByLabel('Mode');
      expect(await mode.locator('option').allTextContents()).toEqual([
        'A summary',
        'Keywords',
        'A shot list',
      ]);
      await page.goto('/models/rendergate/start-end-to-video');
      expect(await page.locator('#price').textContent()).toBe('fill in the required fields above');
      expect(await page.locator('.example dl.inputs').first().textContent()).not.toMatch(
        /\btrue\b|\bfalse\b/,
      );

      // 22 renders: History shows 20, with stills and no player, and a link to the older ones.
      const ids: string[] = [];
      for (let i = 0; i < 22; i++) {
        const r = await f.api.call('POST', '/v1/generations', {
          key,
          body: {
            modelId: 'rendergate/shot-list',
            inputs: { text: `Render number ${i} of the second pass. It has two sentences.` },
          },
          headers: { 'idempotency-key': crypto.randomUUID() },
        });
        expect(r.status).toBe(202);
        ids.push(r.json.id as string);
      }
      for (const id of ids) await f.api.waitFinal(key, id);
      await page.goto('/history');
      expect(await page.locator('li.gen').count()).toBe(20);
      expect(await page.locator('li.gen video').count()).toBe(0);
      expect(await page.locator('li.gen .thumb-link').count()).toBe(20);
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      expect(height).toBeLessThan(20 * 420);
      await checked(page, `history at ${size.width}`);
      await page.getByRole('link', { name: 'Older renders →' }).click();
      expect(await page.locator('li.gen').count()).toBe(2);
      await page.getByRole('link', { name: '← Newest' }).waitFor();

      // A render's page: titled by its model and prompt; its id's Copy button on one line.
      await page.goto(`/history/${ids[0]}`);
      const title = 'Shot list: Render number 0 of the second pass. It…';
      await page.getByRole('heading', { level: 1, name: title }).waitFor();
      expect(await page.getByText('Mode', { exact: true }).count()).toBeGreaterThan(0);
      const copy = await page.getByRole('button', { name: 'Copy id' }).boundingBox();
      expect(copy!.height).toBeLessThan(48);
      await checked(page, `render page at ${size.width}`);

      // Keys: on a phone each value says what it is; a key's start never breaks.
      await page.goto('/keys');
      const row = page.getByRole('row').filter({ hasText: 'Laptop' });
      const start = await row.locator('code.token').boundingBox();
      expect(start!.height).toBeLessThan(30);
      if (size.width < 600) {
        const said = await row
          .locator('td[data-label]')
          .evaluateAll((tds) => tds.map((td) => getComputedStyle(td, '::before').content));
        expect(said).toEqual(
          expect.arrayContaining(['"Last used: "', '"Daily cap: "', '"Rate limit: "']),
        );
      }
      await checked(page, `keys at ${size.width}`);

      // Usage: a date input is as wide as a date.
      await page.goto('/usage');
      const from = await page.getByLabel('From').boundingBox();
      expect(from!.width).toBeLessThan(220);
      await checked(page, `usage at ${size.width}`);

      // /docs: the studio's header, with the way back to the studio.
      await page.goto('/docs');
      await page.locator('rapi-doc').waitFor();
      await page.locator('header.top').getByRole('link', { name: 'Rendergate' }).waitFor();
      expect(await page.title()).toBe('API reference · Rendergate');
      await checked(page, `docs at ${size.width}`);
      await context.close();
    }, 240_000);
  }
});
