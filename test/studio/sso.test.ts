// Single sign-on against a real OpenID Provider (test/helpers/oidc-provider.ts, the certified
// oidc-provider package): a full sign-in in a browser, and over HTTP each way it can fail, each a
// sign-in page saying why with nothing half-written: a forged or replayed callback, one from
// another browser, an expired code, an unverified email, an ID token for another audience, the
// provider down. The first sign-in makes the person (or, with sign-up closed, joins their invites)
// and is audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { freshDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startProvider, type TestProvider } from '../helpers/oidc-provider.ts';
import { launchBrowser, freshPage } from '../helpers/browser.ts';
import { waitFor } from '../helpers/wait.ts';
import { StudioSession } from './http-session.ts';
import { toCallback as followToCallback } from './oidc-flow.ts';
import { ADMIN, freePort } from '../helpers/service.ts';
import { checkPage, uniqueEmail } from './helpers.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let op: TestProvider;
beforeAll(async () => {
  dbh = await freshDatabase();
  op = await startProvider();
  svc = await startTestService(dbh.url, {
    role: 'api',
    env: {
      RENDERGATE_OIDC_ISSUER: op.issuer,
      RENDERGATE_OIDC_CLIENT_ID: op.clientId,
      RENDERGATE_OIDC_CLIENT_SECRET: op.clientSecret,
      RENDERGATE_OIDC_NAME: 'Company SSO',
    },
  });
  op.serve([`${svc.base}/auth/oidc/callback`]);
});
afterAll(async () => {
  await svc?.stop();
  await op?.close();
  await dbh?.drop();
});

const toCallback = (s: StudioSession) => followToCallback(s, op.issuer, svc.base);

const asUser = (email: string, verified = true) => {
  op.user = { sub: `sub-${email}`, email, email_verified: verified };
};
const sessions = async () =>
  Number((await dbh.db.query('SELECT count(*) FROM studio_sessions')).rows[0].count);
const people = async (email: string) =>
  (await dbh.db.query('SELECT id FROM people WHERE lower(email) = lower($1)', [email])).rowCount;

describe('single sign-on', () => {
  it('signs a new person in, making their account, audited as a first sign-in', async () => {
    const email = uniqueEmail();
    asUser(email);
    const s = new StudioSession(svc.base);
    const cb = await toCallback(s);
    const done = await s.get(cb);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/keys');
    expect((await s.get('/keys')).status).toBe(200);
    const { rows } = await dbh.db.query(
      `SELECT e.action, e.details FROM audit_events e JOIN accounts a ON a.id = e.account_id
        WHERE lower(a.email) = lower($1)`,
      [email],
    );
    expect(rows).toEqual([
      { action: 'session.signed_in', details: { via: 'sso', firstSignIn: true } },
    ]);
    // the callback replayed (same state): refused, no second session
    const before = await sessions();
    const replay = await s.get(cb);
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('did not start here, took too long, or was finished already');
    expect(await sessions()).toBe(before);
    // a known person signs in again, not made twice
    const t = new StudioSession(svc.base);
    expect((await t.get(await toCallback(t))).status).toBe(303);
    expect(await people(email)).toBe(1);
  });

  it('refuses a forged state, and a callback from another browser', async () => {
    asUser(uniqueEmail());
    const s = new StudioSession(svc.base);
    const cb = await toCallback(s);
    const forged = cb.replace(/state=[^&]+/, 'state=forged-state-value');
    const r = await s.get(forged);
    expect(r.status).toBe(400);
    expect(r.text).toContain('did not start here');
    // the real callback, carried to another browser (no binding cookie): refused too
    const other = new StudioSession(svc.base);
    const o = await other.get(cb);
    expect(o.status).toBe(400);
    expect(other.cookies.has('rg_session')).toBe(false);
  });

  it('refuses an expired code', async () => {
    const email = uniqueEmail();
    asUser(email);
    op.codeTtlS = 1;
    try {
      const s = new StudioSession(svc.base);
      const cb = await toCallback(s);
      const issued = Date.now();
      await waitFor('the code expired', () => Date.now() - issued > 2100);
      const r = await s.get(cb);
      expect(r.status).toBe(400);
      expect(r.text).toContain('refused the sign-in code');
      expect(await people(email)).toBe(0);
    } finally {
      op.codeTtlS = 60;
    }
  });

  it('refuses an unverified email, making no one', async () => {
    const email = uniqueEmail();
    asUser(email, false);
    const s = new StudioSession(svc.base);
    const r = await s.get(await toCallback(s));
    expect(r.status).toBe(403);
    expect(r.text).toContain('has not verified your email address');
    expect(await people(email)).toBe(0);
  });

  it('refuses an ID token for another audience', async () => {
    const email = uniqueEmail();
    asUser(email);
    op.forgeAudience = 'another-client';
    try {
      const s = new StudioSession(svc.base);
      const r = await s.get(await toCallback(s));
      expect(r.status).toBe(400);
      expect(r.text).toContain('did not check out');
      expect(await people(email)).toBe(0);
    } finally {
      op.forgeAudience = null;
    }
  });

  it('says so when the provider is down', async () => {
    const deadIssuer = `http://127.0.0.1:${await freePort()}`;
    const other = await startTestService(dbh.url, {
      role: 'api',
      env: {
        RENDERGATE_OIDC_ISSUER: deadIssuer,
        RENDERGATE_OIDC_CLIENT_ID: 'x',
        RENDERGATE_OIDC_CLIENT_SECRET: 'y',
      },
    });
    try {
      const s = new StudioSession(other.base);
      const page = await s.get('/signin');
      expect(page.text).toContain('Sign in with SSO');
      const r = await s.get('/auth/oidc/start');
      expect(r.status).toBe(503);
      expect(r.text).toContain('could not be reached');
    } finally {
      await other.stop();
    }
  });

  describe('with sign-up closed', () => {
    let closedOp: TestProvider;
    let closed: TestService;
    beforeAll(async () => {
      closedOp = await startProvider();
      closed = await startTestService(dbh.url, {
        role: 'api',
        env: {
          RENDERGATE_SIGNUP: 'closed',
          RENDERGATE_OIDC_ISSUER: closedOp.issuer,
          RENDERGATE_OIDC_CLIENT_ID: closedOp.clientId,
          RENDERGATE_OIDC_CLIENT_SECRET: closedOp.clientSecret,
        },
      });
      closedOp.serve([`${closed.base}/auth/oidc/callback`]);
    });
    afterAll(async () => {
      await closed?.stop();
      await closedOp?.close();
    });
    const admin = async (method: string, path: string, body: unknown) => {
      const r = await fetch(`${closed.base}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    const signInAs = async (email: string) => {
      closedOp.user = { sub: `sub-${email}`, email, email_verified: true };
      const s = new StudioSession(closed.base);
      const cb = await followToCallback(s, closedOp.issuer, closed.base);
      return { s, r: await s.get(cb) };
    };

    it('refuses an email nobody invited, making no one', async () => {
      const email = uniqueEmail();
      const { r } = await signInAs(email);
      expect(r.status).toBe(403);
      expect(r.text).toContain('sign-up is closed');
      expect(await people(email)).toBe(0);
    });

    it('joins the accounts that invited the email, with their role', async () => {
      const owner = uniqueEmail();
      const made = await admin('POST', '/accounts', { email: owner });
      expect(made.status).toBe(201);
      const accountId = made.body.id as string;
      const email = uniqueEmail();
      const invited = await admin('POST', `/accounts/${accountId}/members`, {
        email,
        role: 'developer',
      });
      expect(invited.body.status).toBe('invited');
      const { s, r } = await signInAs(email);
      expect(r.status).toBe(303);
      expect((await s.get('/keys')).status).toBe(200);
      const { rows } = await dbh.db.query(
        `SELECT m.role FROM memberships m JOIN people p ON p.id = m.person_id
          WHERE lower(p.email) = lower($1)`,
        [email],
      );
      expect(rows).toEqual([{ role: 'developer' }]);
      const log = await dbh.db.query(
        'SELECT action, details FROM audit_events WHERE account_id = $1 ORDER BY seq',
        [accountId],
      );
      expect(log.rows.map((e: { action: string }) => e.action)).toEqual(
        expect.arrayContaining(['member.joined', 'session.signed_in']),
      );
    });
  });

  describe('in a browser', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchBrowser();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('signs in through the provider to the studio', async () => {
      const email = uniqueEmail();
      asUser(email);
      const { context, page } = await freshPage(browser, svc.base);
      try {
        await page.goto('/signin');
        await page.getByRole('link', { name: 'Sign in with Company SSO' }).click();
        await page.getByText('Balance').waitFor();
        expect(new URL(page.url()).pathname).toBe('/');
        await page.goto('/account');
        await page.getByText(email).waitFor();
        // the two-factor enrolment as a person sees it: the QR code drawn, the key as text
        await page.getByRole('button', { name: 'Turn on two-factor' }).click();
        const qr = page.getByRole('img', { name: 'QR code of your two-factor key' });
        await qr.waitFor();
        expect(await qr.evaluate((i: HTMLImageElement) => i.naturalWidth)).toBeGreaterThan(100);
        expect(await page.getByLabel('Key').inputValue()).toMatch(/^[A-Z2-7]{4}( [A-Z2-7]{4})+$/);
        await checkPage(page, 'two-factor enrolment');
      } finally {
        await context.close();
      }
    });
  });
});
