// The operator's side, in a real browser and on the command line: the /admin console (admin token
// sign-in, accounts, invite, credit, keys, refund, ledger), `rendergate accounts invite` and
// `accounts reset-link`, and password resets by mail through a real SMTP server (smtp-server).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { serviceFixture } from '../helpers/fixture.ts';
import { ADMIN } from '../helpers/service.ts';
import { freshPage, launchBrowser } from '../helpers/browser.ts';
import { checkInvariants } from '../helpers/invariants.ts';
import { PASSWORD, signIn, signUp, uniqueEmail } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';
import { startMailingService } from './mailbox.ts';

const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '1' } });
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const ROOT = path.resolve(import.meta.dirname, '../..');
async function cli(...args: string[]) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-cli-'));
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'src/main.ts', ...args],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: f.dbh.url,
        RENDERGATE_PUBLIC_URL: f.svc.base,
        RENDERGATE_DATA_DIR: dataDir,
      },
    },
  );
  return JSON.parse(stdout);
}

describe('operator console', () => {
  it('signs in with the admin token; invites, credits, creates and revokes a key, refunds a render, shows the ledger', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    await page.goto('/admin');
    await page.getByLabel('Admin token').fill('not the token at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('That is not the admin token.').waitFor();
    await page.getByLabel('Admin token').fill(ADMIN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Accounts' }).waitFor();

    const email = uniqueEmail();
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Invite' }).click();
    const link = await page.getByLabel('One-time link').inputValue();
    await page.getByLabel('Amount (€)').fill('12.50');
    await page.getByRole('button', { name: 'Add credit' }).click();
    await page.getByText('Balance: €12.50').waitFor();
    await page.getByLabel('Name').fill('server');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByLabel('New key').inputValue();

    // The invited person sets a password through the link and is signed in; the link is spent.
    const person = await freshPage(browser, f.svc.base);
    await person.page.goto(link);
    await person.page.getByLabel('Password').fill(PASSWORD);
    await person.page.getByRole('button', { name: 'Set password' }).click();
    await person.page.getByText('Balance').waitFor();
    expect(await person.page.locator('#balance').textContent()).toContain('€12.50');
    const again = await person.page.goto(link);
    expect(again!.status()).toBe(410);

    // A render made with the key is refunded from the console.
    const made = await f.api.call('POST', '/v1/generations', {
      key,
      body: { modelId: 'rendergate/shot-list', inputs: { text: 'Refund me.' } },
      headers: { 'idempotency-key': 'op-1' },
    });
    expect((await f.api.waitFinal(key, made.json.id)).status).toBe('succeeded');
    await page.getByRole('link', { name: 'Accounts', exact: true }).click();
    await page.getByLabel('Search').fill(email.slice(0, 8));
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: email }).click();
    await page.getByRole('button', { name: `Refund ${made.json.id}` }).click();
    const ledger = page.getByRole('table', { name: /Credits, charges and refunds/ });
    await ledger.getByRole('cell', { name: 'refund' }).waitFor();
    expect(
      await ledger.getByRole('cell', { name: /^(credit|charge|refund)$/ }).allTextContents(),
    ).toEqual(['refund', 'charge', 'credit']);
    await page.getByRole('button', { name: 'Revoke server' }).click();
    await page
      .getByRole('row', { name: /server/ })
      .getByText('revoked')
      .waitFor();
    expect((await f.api.call('GET', '/v1/me', { key })).status).toBe(401);

    // The console's session is its own: it does not sign anyone into the studio, and vice versa.
    await page.goto('/history');
    expect(new URL(page.url()).pathname).toBe('/signin');
    await person.page.goto('/admin');
    await person.page.getByLabel('Admin token').waitFor();
    await page.goto('/admin');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    await checkInvariants(f.dbh.db);
    await person.context.close();
    await context.close();
  });
});

describe('operator command line', () => {
  it('`accounts invite` prints a one-time link that sets the password; `accounts reset-link` one that changes it', async () => {
    const email = uniqueEmail();
    const invite = await cli('accounts', 'invite', '--email', email);
    expect(invite).toMatchObject({
      email,
      purpose: 'invite',
      accountId: expect.stringMatching(/^acct_/),
    });
    expect(invite.link).toMatch(new RegExp(`^${f.svc.base}/invite/[A-Za-z0-9_-]{43}$`));
    const { context, page } = await freshPage(browser, f.svc.base);
    await page.goto(invite.link);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('Balance').waitFor();

    const reset = await cli('accounts', 'reset-link', '--email', email);
    expect(reset).toMatchObject({ accountId: invite.accountId, purpose: 'reset' });
    await page.goto(reset.link);
    await page.getByLabel('Password').fill('a brand new password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('Balance').waitFor();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await signIn(page, email, PASSWORD);
    await page.getByRole('alert').waitFor();
    await signIn(page, email, 'a brand new password');
    await page.getByRole('heading', { name: 'Models' }).waitFor();
    await context.close();
  });
});

describe('password reset by mail', () => {
  it('mails a reset link through SMTP; the link sets a new password once; unknown emails get the same answer and no mail', async () => {
    const { svc, mails, stop } = await startMailingService(f.dbh.url);
    try {
      const { context, page } = await freshPage(browser, svc.base);
      const email = await signUp(page);
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByLabel('Email').fill(email);
      await page.getByRole('button', { name: 'Send reset link' }).click();
      const sent = await page.getByRole('status').textContent();
      await page.goto('/forgot');
      await page.getByLabel('Email').fill(`nobody-${email}`);
      await page.getByRole('button', { name: 'Send reset link' }).click();
      expect(await page.getByRole('status').textContent()).toBe(sent);

      await waitFor('the reset mail', () => mails.length > 0, { intervalMs: 100 });
      expect(mails.map((m) => m.to)).toEqual([email]);
      const link = /(http:\/\/\S+\/reset\/[A-Za-z0-9_-]+)/.exec(
        mails[0].body.replace(/=\r?\n/g, ''),
      )![1];
      await page.goto(link);
      await page.getByLabel('Password').fill('mailed new password');
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.getByText('Balance').waitFor();
      expect((await page.goto(link))!.status()).toBe(410);
      await context.close();
    } finally {
      await stop();
    }
  });
});
