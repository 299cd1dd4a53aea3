// What makes the studio worth choosing, in a real Chromium at 1280 and at 360 px: model cards with prices,
// examples with Try this, human labels, History with sources, filters and timings, snippets that run as
// shown, a Webhooks page with Resend, studio 404 and 500 pages, a self-contained /docs, and on every
// page reached by links (the operator console's too): no sideways scroll and no serious or critical axe
// violation.
// With UPDATE_SCREENSHOTS=1 it refreshes docs/screenshots/ at both sizes.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { serviceFixture } from '../helpers/fixture.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { webhookReceiver } from '../helpers/webhook-receiver.ts';
import { accountIdOf, checkPage, signUp } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';
import { privatePostgres } from '../helpers/db.ts';
import { startTestService } from '../helpers/service.ts';
import pg from 'pg';

const run = promisify(execFile);
const f = serviceFixture({
  env: { RENDERGATE_WORKER_CONCURRENCY: '2', RENDERGATE_WEBHOOK_RETRY_SECONDS: '1,1' },
});
const SIZES = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: 'phone', width: 360, height: 740 },
] as const;
const SHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? path.resolve(import.meta.dirname, '../../docs/screenshots')
    : null;
const ADMIN = 'test-admin-token-0123456789abcdef';

let browser: Browser;
let hooks: Awaited<ReturnType<typeof webhookReceiver>>;
beforeAll(async () => {
  browser = await launchBrowser();
  hooks = await webhookReceiver();
});
afterAll(async () => {
  await hooks?.close();
  await browser?.close();
});

async function sized(
  size: (typeof SIZES)[number],
  storage?: Awaited<ReturnType<BrowserContext['storageState']>>,
) {
  const context = await browser.newContext({
    baseURL: f.svc.base,
    viewport: { width: size.width, height: size.height },
    acceptDownloads: true,
    ...(size.width < 600 ? { isMobile: true, hasTouch: true } : {}),
    ...(storage ? { storageState: storage } : {}),
  });
  const page = await context.newPage();
  page.on('dialog', (d) => {
    void d.accept();
  });
  return { context, page };
}

const shot = async (page: Page, name: string) => {
  if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
};

let email: string;
let storage: Awaited<ReturnType<BrowserContext['storageState']>>;
let key: string;

describe('the studio people choose', () => {
  it('model cards show price and output; a model page has labels, help, examples and Try this that renders', async () => {
    const { context, page } = await sized(SIZES[0]);
    email = await signUp(page);
    await f.api.admin('POST', `/accounts/${await accountIdOf(f.dbh.db, email)}/credits`, {
      amountCents: 5_000,
      reason: 'Welcome credit',
    });
    await page.goto('/');
    const card = page
      .getByRole('listitem')
      .filter({ has: page.getByRole('link', { name: 'Image to video' }) });
    expect(await card.locator('.card-facts').textContent()).toMatch(/MP4 video\s+€0\.30–€0\.62/);
    expect(
      await page
        .getByRole('listitem')
        .filter({ hasText: 'Shot list' })
        .locator('.card-facts')
        .textContent(),
    ).toMatch(/Text\s+€0\.01–€0\.0\d/);

    await page.getByRole('link', { name: 'Start and end frame to video' }).click();
    await page.getByLabel('Last frame', { exact: true }).waitFor(); // the catalog's label
    await page.getByLabel('Movement amplitude', { exact: true }).waitFor(); // the name, humanized
    expect(await page.getByText('How strongly the camera and subject move.').count()).toBe(1); // the field's help
    // No broken preview before anything is chosen; the upload and the address read as one choice.
    expect(
      await page
        .locator('img.preview')
        .evaluateAll((imgs) => imgs.map((i) => getComputedStyle(i).display)),
    ).toEqual(['none', 'none']);
    expect(await page.getByText('Upload a file, or paste an address').count()).toBe(2);
    await page.getByLabel('Upload a file for First frame').waitFor();
    // The example: its output plays from our origin; Try this fills the form (the images become uploads).
    const example = page.getByRole('article').filter({ hasText: 'Day turns to dusk' });
    const video = example.locator('video');
    await waitFor(
      'the example video loaded',
      async () => {
        expect(await video.evaluate((v: HTMLVideoElement) => v.readyState)).toBeGreaterThanOrEqual(
          1,
        );
        return true;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(await video.evaluate((v: HTMLVideoElement) => v.duration)).toBeCloseTo(3, 0);
    await example.getByRole('button', { name: /Try this/ }).click();
    await page.getByText('The form holds the example').waitFor();
    expect(await page.getByLabel('Prompt', { exact: true }).inputValue()).toBe(
      'Day turns to dusk over the lighthouse',
    );
    expect(await page.getByLabel('First frame', { exact: true }).inputValue()).toMatch(
      /\/v1\/uploads\/upl_/,
    );
    expect(await page.getByLabel('Resolution', { exact: true }).inputValue()).toBe('540p');
    await page.locator('img.preview').first().waitFor({ state: 'visible' });
    await waitFor(
      'the example price',
      async () => {
        expect(await page.locator('#price').textContent()).toBe('€0.20');
        return true;
      },
      { intervalMs: 200 },
    );
    await page.getByRole('button', { name: 'Render' }).click();
    await page.getByRole('heading', { name: 'History' }).waitFor();
    // The row shows the video's still; the player is on the render's own page.
    await page.locator('li.gen img.poster[src$="/poster"]').first().waitFor({ timeout: 120_000 });
    storage = await context.storageState();
    await context.close();
  });

  it('History names the source, filters by model and status; a render page has timings, a plain error and snippets that run', async () => {
    const { context, page } = await sized(SIZES[0], storage);
    await page.goto('/keys');
    await page.getByLabel('Name').fill('ci server');
    await page.getByRole('button', { name: 'Create key' }).click();
    key = await page.getByLabel('New key').inputValue();
    const made = await f.api.call('POST', '/v1/generations', {
      key,
      headers: { 'idempotency-key': 'choose-1' },
      body: {
        modelId: 'rendergate/shot-list',
        inputs: { text: 'A harbour at dawn. Boats leave.', mode: 'keywords' },
      },
    });
    expect(made.status).toBe(202);
    await f.api.waitFinal(key, made.json.id);
    // A render that fails: its image address answers 404.
    const failed = await f.api.call('POST', '/v1/generations', {
      key,
      headers: { 'idempotency-key': 'choose-2' },
      body: {
        modelId: 'rendergate/image-to-video',
        inputs: { prompt: 'gone', image: f.img.url('/missing.png') },
      },
    });
    await f.api.waitFinal(key, failed.json.id);

    await page.goto('/history');
    const apiRow = page.getByRole('listitem').filter({ hasText: 'A harbour at dawn' });
    expect(await apiRow.locator('.source').textContent()).toBe(
      `From ci server (${key.slice(0, 12)}…)`,
    );
    expect(
      await page
        .getByRole('listitem')
        .filter({ has: page.getByRole('link', { name: 'Start and end frame to video' }) })
        .locator('.source')
        .textContent(),
    ).toBe(`From ${email}`);
    const failRow = page.getByRole('listitem').filter({ hasText: 'gone' });
    expect(await failRow.locator('p.error').textContent()).toMatch(
      /^An input could not be found at its address: .+ Its cost, €0\.30, was refunded\.$/,
    );

    await page.getByLabel('Model', { exact: true }).selectOption('rendergate/shot-list');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/model=rendergate%2Fshot-list/);
    expect(await page.locator('li.gen').count()).toBe(1);
    await page.getByLabel('Model', { exact: true }).selectOption('');
    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=failed/);
    expect(await page.locator('li.gen h2').allTextContents()).toEqual(['Image to video']);

    await page.goto(`/history/${made.json.id}`);
    const timings = await page.locator('dl.timings').textContent();
    expect(timings).toMatch(/Queued.*UTC/s);
    expect(timings).toMatch(/Render seconds\s*\d+\.\d s/);
    const [curl, js, py] = await page.locator('pre.code').allTextContents();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-snippets-'));
    const env: NodeJS.ProcessEnv = { ...process.env, RENDERGATE_API_KEY: key };
    // curl, as shown (with a uuidgen on PATH when the machine has none).
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.writeFileSync(
      path.join(dir, 'bin', 'uuidgen'),
      '#!/bin/sh\nnode -e "console.log(crypto.randomUUID())"\n',
      { mode: 0o755 },
    );
    const c = JSON.parse(
      (
        await run('bash', ['-c', curl], {
          env: { ...env, PATH: `${env.PATH}:${path.join(dir, 'bin')}` },
        })
      ).stdout,
    );
    expect(c).toMatchObject({
      modelId: 'rendergate/shot-list',
      status: 'queued',
      inputs: made.json.inputs,
    });
    // JavaScript with our client, installed as a dependency of the script's folder.
    await buildClient();
    fs.mkdirSync(path.join(dir, 'node_modules', '@rendergate'), { recursive: true });
    fs.symlinkSync(
      path.resolve(import.meta.dirname, '../../packages/client'),
      path.join(dir, 'node_modules', '@rendergate', 'client'),
    );
    fs.writeFileSync(path.join(dir, 'run.mjs'), js);
    expect((await run(process.execPath, [path.join(dir, 'run.mjs')], { env })).stdout).toMatch(
      /^succeeded /,
    );
    // Python with requests.
    fs.writeFileSync(path.join(dir, 'run.py'), py);
    expect((await run('python3', [path.join(dir, 'run.py')], { env })).stdout).toMatch(
      /^succeeded /,
    );
    await context.close();
  });

  it('the Webhooks page adds an endpoint with its secret once, lists deliveries and resends one; deletes it', async () => {
    const { context, page } = await sized(SIZES[0], storage);
    await page.goto('/webhooks');
    await page.getByLabel('Endpoint address').fill('not an address');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await page.locator('#wh-url-err').textContent()).toMatch(/^The address /);
    await page.getByLabel('Endpoint address').fill(hooks.url('/ok'));
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = await page.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    hooks.secret('/ok', secret);
    await page.goto('/webhooks');
    expect(await page.content()).not.toContain(secret);
    const made = await f.api.call('POST', '/v1/generations', {
      key,
      headers: { 'idempotency-key': 'choose-3' },
      body: { modelId: 'rendergate/shot-list', inputs: { text: 'For the webhook.' } },
    });
    await waitFor('the webhook', () =>
      hooks.received.some(
        (x) => x.body.type === 'generation.succeeded' && x.body.data.id === made.json.id,
      ),
    );
    await waitFor(
      'the delivery shown delivered',
      async () => {
        await page.goto('/webhooks');
        expect(
          await page
            .getByRole('row')
            .filter({ hasText: 'generation.succeeded' })
            .getByRole('cell')
            .first()
            .textContent(),
        ).toMatch(/^delivered/);
        return true;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    const row = page.getByRole('row').filter({ hasText: 'generation.succeeded' });
    expect(await row.locator('td[data-label=Attempts]').textContent()).toBe('1');
    await row.getByRole('button', { name: /Resend/ }).click();
    await page.getByText('The delivery is being sent again now.').waitFor();
    await waitFor(
      'the resent webhook',
      () =>
        hooks.received.filter(
          (x) => x.body.type === 'generation.succeeded' && x.body.data.id === made.json.id,
        ).length === 2,
    );
    const sent = hooks.received.filter(
      (x) => x.body.type === 'generation.succeeded' && x.body.data.id === made.json.id,
    );
    expect(sent[1].id).toBe(sent[0].id); // the same webhook-id: the receiver can tell it is the same event
    expect(sent.every((x) => x.verified)).toBe(true);
    await waitFor(
      'the second attempt shown',
      async () => {
        await page.goto('/webhooks');
        expect(
          await page
            .getByRole('row')
            .filter({ hasText: 'generation.succeeded' })
            .locator('td[data-label=Attempts]')
            .textContent(),
        ).toBe('2');
        return true;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    // Delete: another endpoint goes, the first stays (and shows on the later pages and screenshots).
    await page.getByLabel('Endpoint address').fill(hooks.url('/gone'));
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.goto('/webhooks');
    expect(await page.getByRole('article').count()).toBe(2);
    await page.getByRole('button', { name: `Delete ${hooks.url('/gone')}` }).click();
    await waitFor(
      'the endpoint deleted',
      async () => {
        expect(await page.getByRole('article').count()).toBe(1);
        return true;
      },
      { intervalMs: 200 },
    );
    await page.getByRole('heading', { name: hooks.url('/ok') }).waitFor();
    await context.close();
  });

  it('a mistyped address is a studio 404 signed in or not; the API keeps JSON; the favicon and the account id are there', async () => {
    const { context, page } = await sized(SIZES[0], storage);
    const res = await page.goto('/histroy');
    expect(res!.status()).toBe(404);
    expect(res!.headers()['content-type']).toMatch(/^text\/html/);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await page.getByRole('link', { name: 'Back to the studio' }).waitFor();
    await page.locator('#balance').waitFor(); // the header of a signed-in person
    const gen404 = await page.goto('/history/gen_00000000000000000000000000000000');
    expect(gen404!.status()).toBe(404);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    const api = await f.api.call('GET', '/v1/nope', { key });
    expect(api.json.code).toBe('NOT_FOUND');
    expect((await page.request.get('/favicon.ico')).headers()['content-type']).toBe(
      'image/svg+xml',
    );
    await page.goto('/account');
    expect(await page.getByLabel('Account id').inputValue()).toBe(
      await accountIdOf(f.dbh.db, email),
    );
    await context.close();
    const anon = await sized(SIZES[1]);
    const r2 = await anon.page.goto('/no/such/page');
    expect(r2!.status()).toBe(404);
    await anon.page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await anon.context.close();
  });

  it('a database gone is the studio 503 page, a fault of ours the 500 page: no detail, no sideways scroll', async () => {
    // Real faults on a service of its own with a PostgreSQL of its own, under a signed-in person: the
    // database stopped (503, as on the API), then the table History reads renamed away underneath the
    // running service (a bug's kind of fault: 500).
    const own = await privatePostgres();
    const svc = await startTestService(own.url, { role: 'api' });
    const sql = async (text: string) => {
      const c = new pg.Client({ connectionString: own.url });
      await c.connect();
      try {
        await c.query(text);
      } finally {
        await c.end();
      }
    };
    const noLeak = (html: string) => {
      // Nothing of the fault leaks: no stack, no error or its code, no address of the database.
      for (const leak of [
        /ECONNREFUSED|57P01|42P01|terminated|generations_away|\w*Error\b/,
        /\bat \S+ \(|\.ts:\d+|node_modules/,
        /postgres|127\.0\.0\.1:\d+|localhost/i,
      ])
        expect(html, String(leak)).not.toMatch(leak);
    };
    const studioPage = async (page: Page) => {
      // The studio's own page: its header and stylesheet, a way back.
      await page.getByRole('link', { name: 'Back to the studio' }).waitFor();
      await page.getByRole('link', { name: 'Rendergate' }).waitFor();
      expect(
        await page.evaluate(() => getComputedStyle(document.querySelector('header.top')!).display),
      ).toBe('flex'); // studio.css applied
    };
    const historyAnswers = (page: Page) =>
      waitFor(
        'History to answer again',
        async () => (await page.goto('/history'))!.status() === 200,
        {
          intervalMs: 250,
        },
      );
    try {
      for (const size of SIZES) {
        const context = await browser.newContext({
          baseURL: svc.base,
          viewport: { width: size.width, height: size.height },
          ...(size.width < 600 ? { isMobile: true, hasTouch: true } : {}),
        });
        const page = await context.newPage();
        await signUp(page);
        expect((await page.goto('/history'))!.status()).toBe(200);

        await own.stop();
        const down = await page.goto('/history');
        expect(down!.status()).toBe(503);
        expect(Number(down!.headers()['retry-after'])).toBeGreaterThan(0);
        expect(down!.headers()['content-type']).toMatch(/^text\/html/);
        await page.getByRole('heading', { name: 'Briefly unavailable' }).waitFor();
        await page.getByText('The service is briefly unavailable; retry shortly.').waitFor();
        await studioPage(page);
        noLeak(await down!.text());
        await checkPage(page, `503 at ${size.width}`);
        // The database back: the same page works again, without restarting the service.
        await own.start();
        await historyAnswers(page);

        await sql('ALTER TABLE generations RENAME TO generations_away');
        try {
          const res = await page.goto('/history');
          expect(res!.status()).toBe(500);
          expect(res!.headers()['content-type']).toMatch(/^text\/html/);
          expect(res!.headers()['cache-control']).toBe('no-store');
          await page.getByRole('heading', { name: 'Something went wrong' }).waitFor();
          await page.getByText('An internal error occurred; it has been logged.').waitFor();
          await studioPage(page);
          noLeak(await res!.text());
          await checkPage(page, `500 at ${size.width}`);
        } finally {
          await sql('ALTER TABLE generations_away RENAME TO generations');
        }
        await historyAnswers(page);
        await context.close();
      }
    } finally {
      await svc.stop();
      await own.destroy();
    }
  }, 180_000);

  it('/docs loads nothing from another origin, logs no error, and has navigation on a phone', async () => {
    for (const size of SIZES) {
      const { context, page } = await sized(size);
      const foreign: string[] = [];
      const errors: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(f.svc.base) && !r.url().startsWith('data:')) foreign.push(r.url());
      });
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto('/docs');
      await page.locator('rapi-doc').waitFor();
      await page
        .getByRole('navigation', { name: 'API sections' })
        .getByRole('link', { name: 'Generations' })
        .click();
      // RapiDoc scrolls its section into view (then names the operation in view in the address).
      await waitFor(
        'the section scrolled into view',
        async () => {
          expect((await page.locator('[id="tag--Generations"]').boundingBox())!.y).toBeLessThan(
            200,
          );
          return true;
        },
        { timeoutMs: 10_000, intervalMs: 200 },
      );
      expect(foreign).toEqual([]);
      expect(errors).toEqual([]);
      const [scroll, width] = await page.evaluate(() => [
        document.documentElement.scrollWidth,
        window.innerWidth,
      ]);
      expect(scroll).toBeLessThanOrEqual(width);
      await shot(page, `docs-${size.name}`);
      await context.close();
    }
  }, 120_000);

  for (const size of SIZES) {
    it(`every page reached by links fits ${size.width} px and passes axe, the operator console too`, async () => {
      const { context, page } = await sized(size, storage);
      const seen = new Set<string>();
      const queue = ['/'];
      // Follows the studio's own links, breadth first (each page once; History's rows and model pages included).
      while (queue.length > 0 && seen.size < 40) {
        const p = queue.shift()!;
        if (seen.has(p)) continue;
        seen.add(p);
        const res = await page.goto(p);
        expect(res!.status(), p).toBeLessThan(400);
        await checkPage(page, `${p} at ${size.width}`);
        const links = await page
          .locator('a[href^="/"]:not([download])')
          .evaluateAll((as) => as.map((a) => a.getAttribute('href')!));
        for (const l of links) {
          const clean = l.split('#')[0];
          if (
            clean &&
            !clean.includes('/content') &&
            !clean.startsWith('/docs') &&
            !clean.includes('/examples/') &&
            !seen.has(clean)
          )
            queue.push(clean);
        }
      }
      expect([...seen]).toEqual(
        expect.arrayContaining(['/', '/history', '/webhooks', '/keys', '/usage', '/account']),
      );
      expect([...seen].filter((p) => p.startsWith('/models/')).length).toBe(3);
      expect([...seen].some((p) => /^\/history\/gen_/.test(p))).toBe(true);
      // The phone's menu: one button opens the header's links.
      if (size.width < 600) {
        await page.goto('/');
        const nav = page.getByRole('navigation', { name: 'Studio' });
        expect(await nav.isVisible()).toBe(false);
        await page.getByRole('button', { name: 'Menu' }).click();
        await nav.getByRole('link', { name: 'Docs' }).waitFor({ state: 'visible' });
        const header = await page.locator('header.top').boundingBox();
        expect(header!.width).toBeLessThanOrEqual(size.width);
      }
      for (const [p, name] of [
        ['/', 'models'],
        ['/models/rendergate/image-to-video', 'model-form'],
        ['/history', 'history'],
        ['/webhooks', 'webhooks'],
        ['/keys', 'api-keys'],
        ['/usage', 'usage'],
        ['/account', 'account'],
      ] as const) {
        if (!SHOTS) break;
        await page.goto(p);
        await shot(page, `${name}-${size.name}`);
      }
      if (SHOTS) {
        await page.goto('/history');
        const first = await page.locator('li.gen h2 a').first().getAttribute('href');
        await page.goto(first!);
        await shot(page, `generation-${size.name}`);
      }
      await page.goto('/does-not-exist');
      await checkPage(page, `404 at ${size.width}`);
      await context.close();

      // Signed out: sign-in and sign-up; then the operator console and an account's page.
      const anon = await sized(size);
      for (const p of ['/signin', '/signup']) {
        await anon.page.goto(p);
        await checkPage(anon.page, `${p} at ${size.width}`);
      }
      await shot(anon.page, `sign-up-${size.name}`);
      await anon.page.goto('/admin');
      await checkPage(anon.page, `/admin sign-in at ${size.width}`);
      await anon.page.getByLabel('Admin token').fill(ADMIN);
      await anon.page.getByRole('button', { name: 'Sign in' }).click();
      // The click starts a navigation: the console is checked once it has loaded, not mid-way.
      await anon.page.getByRole('link', { name: email }).waitFor();
      await checkPage(anon.page, `/admin at ${size.width}`);
      await anon.page.getByRole('link', { name: email }).click();
      await anon.page.getByRole('heading', { name: email }).waitFor();
      await checkPage(anon.page, `/admin/accounts at ${size.width}`);
      await shot(anon.page, `admin-account-${size.name}`);
      await anon.context.close();
    }, 240_000);
  }
});

let built: Promise<void> | null = null;
/** The client package's dist, as `npm install @rendergate/client` gets it (its own build script). */
function buildClient() {
  built ??= run('npm', ['run', 'build', '--silent'], {
    cwd: path.resolve(import.meta.dirname, '../../packages/client'),
  }).then(() => {});
  return built;
}
