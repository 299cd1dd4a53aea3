// The studio in a real headless Chromium, driven as a person would: every element found by its role or
// label (the names the pages in src/studio/views give them). One browser for the file, a fresh profile
// per test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import sharp from 'sharp';
import { serviceFixture } from '../helpers/fixture.ts';
import { freshPage, launchBrowser } from '../helpers/browser.ts';
import { checkInvariants } from '../helpers/invariants.ts';
import { accountIdOf, PASSWORD, signIn, signUp } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';

const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '2' } });
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const credit = async (email: string, cents: number) =>
  f.api.admin('POST', `/accounts/${await accountIdOf(f.dbh.db, email)}/credits`, {
    amountCents: cents,
  });

describe('studio accounts', () => {
  it('signs up, signs out, refuses a wrong password, signs in, changes the password', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    const email = await signUp(page);
    await page.getByText('Balance').first().waitFor({ state: 'visible' }); // throws if it never shows
    expect(await page.locator('#balance').textContent()).toContain('€0.00');
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    await signIn(page, email, 'not the password');
    await page.getByRole('alert').getByText('The email or the password is wrong.').waitFor();
    await signIn(page, email);
    await page.getByRole('heading', { name: 'Models' }).waitFor();

    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel('New password').fill('another good password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Your password has been changed').waitFor();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await signIn(page, email, 'another good password');
    await page.getByRole('heading', { name: 'Models' }).waitFor();
    await context.close();
  });
});

describe('studio renders', () => {
  it('renders a text model from its form: live price, one charge, then the text in History; Delete removes it', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    const email = await signUp(page);
    await credit(email, 1_000);
    await page.goto('/');
    await page.getByRole('link', { name: 'Shot list' }).click();
    const price = page.locator('#price');
    await page
      .getByLabel('Text', { exact: true })
      .fill('A lighthouse at dusk. Waves hit the rocks. A ship passes slowly.');
    const quoted = (
      await f.api.call('POST', '/v1/quote', {
        key: (await f.api.account(0)).key,
        body: {
          modelId: 'rendergate/shot-list',
          inputs: {
            text: 'A lighthouse at dusk. Waves hit the rocks. A ship passes slowly.',
            max_items: 12,
          },
        },
      })
    ).json.costCents;
    await page.getByLabel('Most items', { exact: true }).fill('12');
    await waitFor(
      'the quoted price',
      async () => {
        expect(await price.textContent()).toBe(`€${(quoted / 100).toFixed(2)}`);
        return true;
      },
      { intervalMs: 200 },
    );
    await page.getByRole('button', { name: 'Render' }).click();
    await page.getByRole('heading', { name: 'History' }).waitFor();
    const row = page
      .getByRole('listitem')
      .filter({ has: page.getByRole('heading', { name: 'Shot list' }) });
    await row.locator('pre.text-output').waitFor({ timeout: 60_000 });
    expect(await page.locator('#balance').textContent()).toContain(
      `€${((1000 - quoted) / 100).toFixed(2)}`,
    );
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No renders yet').waitFor();
    await context.close();
  });

  it("shows the API's validation messages beside the fields", async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    const email = await signUp(page);
    await credit(email, 1_000);
    await page.goto('/models/rendergate/image-to-video');
    await page.getByLabel('Image', { exact: true }).fill('not a url');
    await page.getByLabel('Guidance scale', { exact: true }).fill('3');
    await page.getByRole('button', { name: 'Render' }).click();
    await page.getByText('Some fields need attention.').waitFor();
    expect(await page.locator('#f-prompt-err').textContent()).toBe('is required');
    expect(await page.locator('#f-image-err').textContent()).toBe(
      'must be an absolute http or https URL',
    );
    expect(await page.locator('#f-guidance_scale-err').textContent()).toBe(
      'must be a number between 0 and 1',
    );
    // the typed values stay
    expect(await page.getByLabel('Guidance scale', { exact: true }).inputValue()).toBe('3');
    await context.close();
  });

  it('renders a video: it plays and seeks (Range), downloads; a held render is cancelled and refunded', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    const email = await signUp(page);
    await credit(email, 10_000);
    await page.goto('/models/rendergate/image-to-video');
    await page.getByLabel('Prompt', { exact: true }).fill('slow push in');
    await page.getByLabel('Image', { exact: true }).fill(f.img.url('/a.png'));
    await page.getByRole('img', { name: 'Preview of Image' }).waitFor();
    await page.getByRole('button', { name: 'Render' }).click();
    // History's row shows the video's still (taken by ffmpeg when it was stored), not a player.
    const row = page.getByRole('listitem').filter({ hasText: 'slow push in' });
    await row.getByText('Succeeded').waitFor({ timeout: 90_000 });
    expect(await row.locator('video').count()).toBe(0);
    const still = await page.evaluate(
      async (u) => {
        const r = await fetch(u!);
        const b = new Uint8Array(await r.arrayBuffer());
        return [r.headers.get('content-type'), b[0], b[1], b.length > 1000];
      },
      await row.locator('img.poster').getAttribute('src'),
    );
    expect(still).toEqual(['image/jpeg', 0xff, 0xd8, true]);
    // The render's own page: titled by its model and prompt, with the player.
    await row.getByRole('link', { name: 'Image to video' }).click();
    await page.getByRole('heading', { name: 'Image to video: slow push in' }).waitFor();
    expect(await page.title()).toBe('Image to video: slow push in · Rendergate');
    await page.getByRole('img', { name: 'Image', exact: true }).waitFor();
    const video = page.locator('video');
    await video.waitFor({ timeout: 90_000 });
    const duration = await video.evaluate(async (v: HTMLVideoElement) => {
      if (v.readyState < 1)
        await new Promise((r) => v.addEventListener('loadedmetadata', r, { once: true }));
      v.currentTime = v.duration / 2;
      await new Promise((r) => v.addEventListener('seeked', r, { once: true }));
      return v.duration;
    });
    expect(duration).toBeGreaterThan(1);
    const src = await video.getAttribute('src');
    const ranged = await page.evaluate(async (u) => {
      const r = await fetch(u!, { headers: { range: 'bytes=0-99' } });
      return [r.status, (await r.arrayBuffer()).byteLength];
    }, src);
    expect(ranged).toEqual([206, 100]);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^gen_[0-9a-f]{32}\.mp4$/);

    // A render waiting on an image that is never served stays queued until it is cancelled.
    await page.goto('/models/rendergate/image-to-video');
    await page.getByLabel('Prompt', { exact: true }).fill('held');
    await page.getByLabel('Image', { exact: true }).fill(f.img.url('/held/cancel.png'));
    await page.getByRole('button', { name: 'Render' }).click();
    const held = page.getByRole('listitem').filter({ hasText: 'held' });
    await held.getByRole('button', { name: 'Cancel' }).click();
    await held.getByText('refunded').first().waitFor();
    // The cancel's sentence once, and no render time for a render that did not finish.
    const said = (await held.locator('.error').textContent())!;
    expect(said).toMatch(
      /^The render was cancelled by its owner\. Its cost, €[\d.]+, was refunded\.$/,
    );
    expect(await held.textContent()).not.toContain('rendered in');
    // The header's balance follows the refund without a reload.
    const { rows } = await f.dbh.db.query('SELECT balance_cents FROM accounts WHERE id = $1', [
      await accountIdOf(f.dbh.db, email),
    ]);
    await waitFor(
      'the new balance',
      async () => {
        expect(await page.locator('#balance strong').textContent()).toBe(
          `€${(rows[0].balance_cents / 100).toFixed(2)}`,
        );
        return true;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    await checkInvariants(f.dbh.db);
    await context.close();
  });
});

describe('studio API keys and usage', () => {
  it('creates a key shown once, lists its use and spend, revokes it; Usage shows the ledger and its CSV', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    const email = await signUp(page);
    await credit(email, 5_000);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name', { exact: true }).fill('ci');
    await page.getByLabel('Daily cap (€)').fill('2.50');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByLabel('New key').inputValue();
    expect(key).toMatch(/^rg_live_/);
    await page.getByRole('button', { name: 'Copy' }).click();

    // The key works on the API and its render shows up in the studio's History.
    const made = await f.api.call('POST', '/v1/generations', {
      key,
      body: { modelId: 'rendergate/shot-list', inputs: { text: 'From the API.' } },
      headers: { 'idempotency-key': 'k1' },
    });
    expect(made.status).toBe(202);
    await f.api.waitFinal(key, made.json.id);
    await page.goto('/keys');
    expect(await page.content()).not.toContain(key);
    const keyRow = page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'ci' }) });
    const cells = await keyRow.getByRole('cell').allTextContents();
    expect(cells[0]).toBe(key.slice(0, 12) + '…');
    expect(cells[2]).not.toBe('never');
    expect(cells[3]).toBe(`€${(made.json.costCents / 100).toFixed(2)}`);
    expect(cells[4]).toBe('€2.50');
    await page.goto('/history');
    const fromApi = page.getByRole('listitem').filter({ hasText: 'From the API.' });
    await fromApi.waitFor();

    // "Use from the API": the snippets name the same model and inputs (choose.test.ts runs all three as shown).
    await fromApi.getByRole('link', { name: 'Shot list' }).click();
    const [curl, js, py] = await page.locator('pre.code').allTextContents();
    expect(curl).toContain('Authorization: Bearer $RENDERGATE_API_KEY');
    expect(curl).toContain('"modelId": "rendergate/shot-list"');
    expect(js).toContain("await rg.run('rendergate/shot-list', {");
    expect(py).toContain('"modelId": "rendergate/shot-list"');
    // A second render with the key, as the snippets make (the ledger below counts two charges).
    const again = await f.api.call('POST', '/v1/generations', {
      key,
      body: { modelId: 'rendergate/shot-list', inputs: { text: 'From the API.' } },
      headers: { 'idempotency-key': 'k2' },
    });
    expect(again.json).toMatchObject({ inputs: made.json.inputs, costCents: made.json.costCents });

    await page.goto('/keys');
    await keyRow.getByRole('button', { name: 'Revoke' }).click();
    await keyRow.getByText('revoked').waitFor();
    await waitFor(
      'the key to be refused',
      async () => {
        expect((await f.api.call('GET', '/v1/me', { key })).json.code).toBe('API_KEY_REVOKED');
        return true;
      },
      { timeoutMs: 5_000, intervalMs: 200 },
    );

    await page.getByRole('link', { name: 'Usage' }).click();
    const ledger = page.getByRole('table', { name: /Credits, charges and refunds/ });
    expect(await ledger.getByRole('row').count()).toBe(4); // header, the credit, two charges
    const [csv] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export CSV' }).click(),
    ]);
    const stream = await csv.createReadStream();
    const text = await new Promise<string>((resolve, reject) => {
      let out = '';
      stream.on('data', (d) => {
        out += String(d);
      });
      stream.on('end', () => resolve(out));
      stream.on('error', reject);
    });
    const lines = text.trim().split('\r\n');
    expect(lines[0]).toBe('id,createdAt,kind,amountCents,amountEur,generationId,reason');
    expect(lines.slice(1).map((l) => l.split(',')[2])).toEqual([
      '"charge"',
      '"charge"',
      '"credit"',
    ]);
    expect(
      await page
        .getByRole('table', { name: /Per key/ })
        .getByRole('rowheader')
        .allTextContents(),
    ).toEqual([`ci (${key.slice(0, 12)}…)`]);
    const perModel = page
      .getByRole('table', { name: /Per model/ })
      .getByRole('row', { name: /rendergate\/shot-list/ });
    expect(await perModel.getByRole('cell').allTextContents()).toEqual([
      '2',
      `€${((2 * made.json.costCents) / 100).toFixed(2)}`,
    ]);
    await context.close();
  });
});

describe('studio uploads', () => {
  it('uploads an image from the form, previews it, renders a video from it; a file that is no image is refused beside the field', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    const email = await signUp(page);
    await credit(email, 10_000);
    await page.goto('/models/rendergate/image-to-video');
    await page.getByLabel('Prompt', { exact: true }).fill('from an upload');
    await page.getByLabel('Upload a file for Image').setInputFiles({
      name: 'not-an-image.png',
      mimeType: 'image/png',
      buffer: Buffer.from('hello'),
    });
    await page.getByText('does not decode as image/png').waitFor();
    const png = await sharp({
      create: { width: 320, height: 180, channels: 3, background: { r: 30, g: 160, b: 90 } },
    })
      .png()
      .toBuffer();
    await page
      .getByLabel('Upload a file for Image')
      .setInputFiles({ name: 'frame.png', mimeType: 'image/png', buffer: png });
    await waitFor(
      'the upload URL in the field',
      async () => {
        expect(await page.getByLabel('Image', { exact: true }).inputValue()).toMatch(
          new RegExp(`^${f.svc.base}/v1/uploads/upl_`),
        );
        return true;
      },
      { intervalMs: 200 },
    );
    const preview = page.getByRole('img', { name: 'Preview of Image' });
    await waitFor(
      'the preview to load',
      async () => {
        expect(
          await preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth),
        ).toBe(320);
        return true;
      },
      { intervalMs: 200 },
    );
    await page.getByRole('button', { name: 'Render' }).click();
    const row = page.getByRole('listitem').filter({ hasText: 'from an upload' });
    await row.locator('img.poster[src$="/poster"]').waitFor({ timeout: 90_000 });
    // On the render's page the uploaded input is a thumbnail, not its address.
    await row.getByRole('link', { name: 'Image to video' }).click();
    const thumb = page.getByRole('img', { name: 'Image', exact: true });
    expect(await thumb.getAttribute('src')).toMatch(/^\/uploads\/upl_/);
    expect(await page.locator('dl.inputs:not(.timings)').textContent()).not.toContain(
      '/v1/uploads/',
    );
    await page.locator('video').waitFor();
    await context.close();
  });
});

describe('studio live status', () => {
  it("shows a waiting render's place in the queue, then follows it to its video without a reload", async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    const email = await signUp(page);
    await credit(email, 10_000);
    // Both worker slots held by renders whose images are not served yet.
    const holds = [`/held/q-${Date.now()}-1.png`, `/held/q-${Date.now()}-2.png`];
    for (const h of holds) {
      await page.goto('/models/rendergate/image-to-video');
      await page.getByLabel('Prompt', { exact: true }).fill(`holder ${h}`);
      await page.getByLabel('Image', { exact: true }).fill(f.img.url(h));
      await page.getByRole('button', { name: 'Render' }).click();
      await page
        .getByRole('listitem')
        .filter({ hasText: `holder ${h}` })
        .getByText('running')
        .waitFor();
    }
    await page.goto('/models/rendergate/image-to-video');
    await page.getByLabel('Prompt', { exact: true }).fill('waits its turn');
    await page.getByLabel('Image', { exact: true }).fill(f.img.url('/b.png'));
    await page.getByRole('button', { name: 'Render' }).click();
    const waiting = page.getByRole('listitem').filter({ hasText: 'waits its turn' });
    await waiting.getByText('position 1 in queue').waitFor();
    for (const h of holds) f.img.release(h);
    await waiting.locator('img.poster[src$="/poster"]').waitFor({ timeout: 90_000 });
    await context.close();
  });
});
