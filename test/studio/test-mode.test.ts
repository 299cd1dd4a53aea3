// Test mode in the studio, in a real Chromium: the studio acts live, so a test key's renders are on
// none of its pages (History, a generation's page, its file), as the keys page says, and no studio
// link leads to one; the Webhooks page shows endpoints of both modes, each marked, adds either,
// and shows a test endpoint's deliveries without a link into History. At 360 px and to axe as
// every other page.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { serviceFixture } from '../helpers/fixture.ts';
import { freshPage, launchBrowser } from '../helpers/browser.ts';
import { webhookReceiver } from '../helpers/webhook-receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { accountIdOf, signUp } from './helpers.ts';

const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '1' } });
let browser: Browser;
let rx: Awaited<ReturnType<typeof webhookReceiver>>;
beforeAll(async () => {
  browser = await launchBrowser();
  rx = await webhookReceiver();
});
afterAll(async () => {
  await rx?.close();
  await browser?.close();
});

const render = async (key: string, text: string) => {
  const r = await f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId: 'rendergate/shot-list', inputs: { text } },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(r.status).toBe(202);
  return (await f.api.waitFinal(key, r.json.id)) as { id: string; status: string };
};

describe('test mode in the studio', () => {
  it("shows no test render anywhere, and both modes' webhook endpoints, marked", async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    const email = await signUp(page);
    const accountId = await accountIdOf(f.dbh.db, email);
    await f.api.admin('POST', `/accounts/${accountId}/credits`, { amountCents: 1_000 });
    const live = (await f.api.admin('POST', `/accounts/${accountId}/keys`, { name: 'prod' })).key;
    const test = (
      await f.api.admin('POST', `/accounts/${accountId}/keys`, { name: 'ci', mode: 'test' })
    ).key;

    // Two endpoints from the studio: live (the default) and test.
    await page.goto('/webhooks');
    await page.getByLabel('Endpoint address').fill(rx.url('/studio-live'));
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    rx.secret('/studio-live', await page.getByLabel('Signing secret').inputValue());
    await page.getByLabel('Endpoint address').fill(rx.url('/studio-test'));
    await page.getByLabel('Mode').selectOption('test');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    rx.secret('/studio-test', await page.getByLabel('Signing secret').inputValue());
    // The test key sees the test one only; the live key the live one only.
    const urls = async (key: string) =>
      (await f.api.call('GET', '/v1/webhook-endpoints', { key })).json.data.map(
        (e: any) => `${e.mode} ${e.url}`,
      );
    expect(await urls(test)).toEqual([`test ${rx.url('/studio-test')}`]);
    expect(await urls(live)).toEqual([`live ${rx.url('/studio-live')}`]);

    const t = await render(test, 'A test render.');
    const l = await render(live, 'A live render.');
    expect([t.status, l.status]).toEqual(['succeeded', 'succeeded']);
    await waitFor('both succeeded events', () =>
      [t.id, l.id].every((id) =>
        rx.received.some((x) => x.body.type === 'generation.succeeded' && x.body.data.id === id),
      ),
    );
    const to = (id: string) => rx.received.filter((x) => x.body.data.id === id).map((x) => x.path);
    expect(new Set(to(t.id))).toEqual(new Set(['/studio-test']));
    expect(new Set(to(l.id))).toEqual(new Set(['/studio-live']));

    // History: the live render, not the test one; the test one's pages are the studio's 404.
    await page.goto('/history');
    await page.locator(`li[id="${l.id}"]`).waitFor();
    expect(await page.locator(`li[id="${t.id}"]`).count()).toBe(0);
    expect(await page.content()).not.toContain(t.id);
    for (const p of [`/history/${t.id}`, `/history/${t.id}/content`, `/history/${t.id}/row`]) {
      const res = await page.goto(p);
      expect(res!.status(), p).toBe(404);
    }
    await page.goto('/usage');
    expect(await page.content()).not.toContain(t.id);

    // Webhooks: both endpoints, marked; the test one's deliveries name the render without a link.
    await waitFor(
      'the deliveries shown',
      async () => {
        await page.goto('/webhooks');
        return (
          (await page.getByRole('row').filter({ hasText: 'generation.succeeded' }).count()) === 2
        );
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    const card = (path: string) =>
      page.getByRole('article').filter({ has: page.getByRole('heading', { name: rx.url(path) }) });
    expect(await card('/studio-test').getByRole('heading').textContent()).toMatch(/^Test /);
    expect(await card('/studio-live').getByRole('heading').textContent()).toMatch(/^Live /);
    const testRow = card('/studio-test')
      .getByRole('row')
      .filter({ hasText: 'generation.succeeded' });
    expect(await testRow.textContent()).toContain(`test render ${t.id}`);
    expect(await testRow.getByRole('link').count()).toBe(0);
    const liveLink = card('/studio-live')
      .getByRole('row')
      .filter({ hasText: 'generation.succeeded' })
      .getByRole('link', { name: 'render' });
    expect(await liveLink.getAttribute('href')).toBe(`/history/${l.id}`);
    // Every link of the page leads somewhere.
    for (const href of await page
      .locator('main a[href^="/"]')
      .evaluateAll((as) => as.map((a) => a.getAttribute('href')!)))
      expect((await page.request.get(href)).status(), href).toBe(200);
    const axe = await new AxeBuilder({ page })
      .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'])
      .analyze();
    expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual(
      [],
    );
    await page.setViewportSize({ width: 360, height: 740 });
    const [scroll, width] = await page.evaluate(() => [
      document.documentElement.scrollWidth,
      window.innerWidth,
    ]);
    expect(scroll).toBeLessThanOrEqual(width);

    // The studio deletes either; a test key no longer sees the test one.
    await page.setViewportSize({ width: 1280, height: 900 });
    await card('/studio-test')
      .getByRole('button', { name: `Delete ${rx.url('/studio-test')}` })
      .click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    expect(await page.getByRole('article').count()).toBe(1);
    expect(await urls(test)).toEqual([]);
    await context.close();
  });
});
