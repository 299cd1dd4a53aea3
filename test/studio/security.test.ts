// The studio's defences, each attacked for real: markup in user text, forms from other origins (another
// site, another port of this host), cookie flags, session and key kept apart, the sign-in throttle,
// revoked sessions, and single-use, expiring links.
import crypto from 'node:crypto';
import http from 'node:http';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { serviceFixture } from '../helpers/fixture.ts';
import { startTestService } from '../helpers/service.ts';
import { freshPage, launchBrowser } from '../helpers/browser.ts';
import { accountIdOf, PASSWORD, signUp, uniqueEmail } from './helpers.ts';
import { StudioSession } from './http-session.ts';
import { issueToken } from '../../src/services/one-time-links.ts';
import { inviteLink } from '../../src/services/invites.ts';
import { waitFor } from '../helpers/wait.ts';
import { ENTRY_MS } from '../../src/services/session-cache.ts';

const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '1' } });
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const HOSTILE = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">"'&`;

/** A page of another origin (its own port) that posts a form to the studio as soon as it loads. */
async function attackerSite(action: string, fields: Record<string, string>) {
  const inputs = Object.entries(fields)
    .map(([k, v]) => `<input name="${k}" value="${v}">`)
    .join('');
  const html = `<!doctype html><form id=f method=post action="${action}">${inputs}</form><script>document.getElementById('f').submit()</script>`;
  const server = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end(html),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('studio security', () => {
  it('shows a prompt and a key name holding HTML and script as text, everywhere, and runs none of it', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    const email = await signUp(page);
    await f.api.admin('POST', `/accounts/${await accountIdOf(f.dbh.db, email)}/credits`, {
      amountCents: 10_000,
    });
    await page.goto('/models/rendergate/shot-list');
    await page.getByLabel('Text', { exact: true }).fill(HOSTILE);
    await page.getByRole('button', { name: 'Render' }).click();
    const row = page.getByRole('listitem').filter({ hasText: '<script>' });
    await row.locator('pre.text-output').waitFor({ timeout: 60_000 });
    await row.getByRole('link', { name: 'Shot list' }).click();
    await page.getByRole('heading', { name: 'Use from the API' }).waitFor();
    expect(await page.locator('dl.inputs:not(.timings) dd').first().textContent()).toBe(HOSTILE);
    expect(await page.locator('pre.code').first().textContent()).toContain(
      '<script>window.__pwned = 1</script>',
    );
    await page.goto('/keys');
    await page.getByLabel('Name').fill(HOSTILE);
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('rowheader', { name: HOSTILE }).waitFor();
    for (const p of ['/history', '/keys', '/usage']) {
      await page.goto(p);
      expect(
        await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
      ).toBeUndefined();
      expect(await page.locator('script:not([src])').count()).toBe(0);
    }
    // and in the operator's console
    const op = await freshPage(browser, f.svc.base);
    await op.page.goto('/admin');
    await op.page.getByLabel('Admin token').fill('test-admin-token-0123456789abcdef');
    await op.page.getByRole('button', { name: 'Sign in' }).click();
    await op.page.getByRole('link', { name: email }).click();
    await op.page.getByRole('rowheader', { name: HOSTILE }).waitFor();
    expect(
      await op.page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
    ).toBeUndefined();
    await op.context.close();
    await context.close();
  });

  it('refuses a form posted from another site and from another port of the same host', async () => {
    const { context, page } = await freshPage(browser, f.svc.base);
    const email = await signUp(page);
    const accountId = await accountIdOf(f.dbh.db, email);
    const studioPort = new URL(f.svc.base).port;
    for (const host of ['127.0.0.1', 'localhost']) {
      const evil = await attackerSite(`${f.svc.base}/keys`, { name: `evil-${host}`, dailyCap: '' });
      const answer = page.waitForResponse(
        (r) => r.url() === `${f.svc.base}/keys` && r.request().method() === 'POST',
      );
      await page.goto(`http://${host}:${evil.port}/`);
      expect((await answer).status()).toBe(403);
      await evil.close();
      expect(host === '127.0.0.1' ? String(evil.port) : host).not.toBe(studioPort);
    }
    const { rows } = await f.dbh.db.query(
      'SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1',
      [accountId],
    );
    expect(rows[0].n).toBe(0);
    await context.close();
  });

  it('refuses a post without our Origin or without the CSRF token; accepts our own', async () => {
    const s = new StudioSession(f.svc.base);
    await s.signUp();
    await s.get('/keys');
    const other = `http://127.0.0.1:${Number(new URL(f.svc.base).port) + 1}`;
    expect((await s.post('/keys', { name: 'a' }, { origin: other })).status).toBe(403);
    expect((await s.post('/keys', { name: 'a' }, { origin: null })).status).toBe(403);
    expect(
      (
        await s.post(
          '/keys',
          { name: 'a' },
          { origin: null, headers: { referer: `${other}/page` } },
        )
      ).status,
    ).toBe(403);
    expect((await s.post('/keys', { name: 'a' }, { csrf: null })).status).toBe(403);
    expect((await s.post('/keys', { name: 'a' }, { csrf: 'forged' })).status).toBe(403);
    expect((await s.post('/keys', { name: 'a' })).status).toBe(201);
  });

  it('sets the session cookie HttpOnly, SameSite=Lax, Path=/, and Secure only under https', async () => {
    const s = new StudioSession(f.svc.base);
    await s.get('/signup');
    const r = await s.post('/signup', { email: uniqueEmail(), password: PASSWORD });
    const cookie = r.headers.getSetCookie().find((c) => c.startsWith('rg_session='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Secure/);
    expect(s.cookies.get('rg_session')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // the table holds only a hash of it
    const { rows } = await f.dbh.db.query(
      'SELECT count(*)::int AS n FROM studio_sessions WHERE id_hash = $1::bytea',
      [Buffer.from(s.cookies.get('rg_session')!)],
    );
    expect(rows[0].n).toBe(0);

    // Behind https (the public URL says so), the cookies are Secure too.
    const tls = await startTestService(f.dbh.url, {
      role: 'api',
      env: { RENDERGATE_PUBLIC_URL: 'https://studio.example.test' },
    });
    try {
      const t = new StudioSession(tls.base, 'https://studio.example.test');
      await t.get('/signup');
      const made = await t.post('/signup', { email: uniqueEmail(), password: PASSWORD });
      expect(made.status).toBe(303);
      for (const c of made.headers.getSetCookie()) expect(c).toMatch(/; Secure/);
    } finally {
      await tls.stop();
    }
  });

  it('keeps sessions and keys apart: /v1 ignores the cookie, the studio ignores a key', async () => {
    const s = new StudioSession(f.svc.base);
    await s.signUp();
    const me = await fetch(`${f.svc.base}/v1/me`, { headers: { cookie: s.cookieHeader() } });
    expect([me.status, (await me.json()).code]).toEqual([401, 'API_KEY_MISSING']);
    await s.get('/keys');
    const created = await s.post('/keys', { name: 'k' });
    const key = /id="new-key" readonly value="([^"]+)"/.exec(created.text)![1];
    expect((await f.api.call('GET', '/v1/me', { key })).status).toBe(200);
    const page = await fetch(`${f.svc.base}/history`, {
      headers: { authorization: `Bearer ${key}` },
      redirect: 'manual',
    });
    expect([page.status, page.headers.get('location')]).toEqual([303, '/signin?next=%2Fhistory']);
  });

  it('throttles sign-in per account without telling whether the email exists', async () => {
    const s = new StudioSession(f.svc.base);
    const email = await s.signUp();
    const stranger = new StudioSession(f.svc.base);
    const answers: Record<string, number[]> = { known: [], unknown: [] };
    await stranger.get('/signin');
    for (let i = 0; i < 10; i++) {
      answers.known.push(
        (await stranger.post('/signin', { email, password: 'wrong password' })).status,
      );
      answers.unknown.push(
        (await stranger.post('/signin', { email: `nobody-${email}`, password: 'wrong password' }))
          .status,
      );
    }
    expect(answers.known).toEqual(Array(10).fill(401));
    expect(answers.unknown).toEqual(Array(10).fill(401));
    // now even the right password is refused for a while, and the unknown email answers the same
    const right = await stranger.post('/signin', { email, password: PASSWORD });
    const unknown = await stranger.post('/signin', {
      email: `nobody-${email}`,
      password: PASSWORD,
    });
    expect([right.status, unknown.status]).toEqual([429, 429]);
    const strip = (t: string) => t.replace(/value="[^"]*"/g, '');
    expect(strip(right.text).replace(email, 'E')).toBe(
      strip(unknown.text).replace(`nobody-${email}`, 'E'),
    );
  });

  it("refuses a revoked session at once: sign out everywhere ends the other browser's session", async () => {
    const a = new StudioSession(f.svc.base);
    const email = await a.signUp();
    const b = new StudioSession(f.svc.base);
    await b.get('/signin');
    expect((await b.post('/signin', { email, password: PASSWORD })).status).toBe(303);
    expect((await b.get('/history')).status).toBe(200);
    await a.get('/account');
    expect((await a.post('/signout-everywhere', {})).status).toBe(303);
    expect((await b.get('/history')).status).toBe(303);
    expect((await a.get('/history')).status).toBe(303);
  });

  it('ends a session after its idle time and after its absolute lifetime', async () => {
    const idle = new StudioSession(f.svc.base);
    await idle.signUp();
    const whole = new StudioSession(f.svc.base);
    await whole.signUp();
    const hash = (s: StudioSession) =>
      crypto.createHash('sha256').update(s.cookies.get('rg_session')!).digest();
    expect((await idle.get('/history')).status).toBe(200);
    await f.dbh.db.query(
      `UPDATE studio_sessions SET last_seen_at = now() - interval '2 hours 1 minute' WHERE id_hash = $1`,
      [hash(idle)],
    );
    // Two idle hours pass without a request, so no process still keeps the session in memory (it
    // keeps one a second: session-cache.ts ENTRY_MS); this write, made in a moment, waits for that.
    await waitFor(
      'the idle session to end',
      async () => (await idle.get('/history')).status === 303,
      {
        timeoutMs: 5_000,
        intervalMs: 50,
      },
    );
    // Active all along, but created over 7 days ago.
    await f.dbh.db.query(
      `UPDATE studio_sessions SET expires_at = now() - interval '1 second' WHERE id_hash = $1`,
      [hash(whole)],
    );
    expect((await whole.get('/history')).status).toBe(303);
  });

  it("writes a stale session's last-seen time once, however many of its requests arrive together", async () => {
    const s = new StudioSession(f.svc.base);
    await s.signUp();
    const hash = crypto.createHash('sha256').update(s.cookies.get('rg_session')!).digest();
    const db = f.dbh.db;
    // Counts the writes of last_seen_at (a row trigger fires only for rows an UPDATE changed).
    await db.query(`CREATE TABLE touch_count (n int NOT NULL); INSERT INTO touch_count VALUES (0)`);
    await db.query(`CREATE FUNCTION count_touch() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN UPDATE touch_count SET n = n + 1; RETURN NEW; END $$`);
    await db.query(`CREATE TRIGGER count_touch AFTER UPDATE OF last_seen_at ON studio_sessions
      FOR EACH ROW EXECUTE FUNCTION count_touch()`);
    const lock = await db.connect();
    try {
      await db.query(
        `UPDATE studio_sessions SET last_seen_at = now() - interval '5 minutes' WHERE id_hash = $1`,
        [hash],
      );
      await db.query('UPDATE touch_count SET n = 0');
      // The time under test: the entry the service keeps in memory (read at sign-up, seen a moment
      // ago) expires, so the next requests read the row as stale (session-cache.ts).
      await new Promise((r) => setTimeout(r, ENTRY_MS + 100));
      // The session's row held, as a slow write would hold it: the first request's write waits on
      // it, and every request reads the row as stale.
      await lock.query('BEGIN');
      await lock.query('SELECT 1 FROM studio_sessions WHERE id_hash = $1 FOR UPDATE', [hash]);
      let answered = 0;
      const answers = Array.from({ length: 24 }, () =>
        s.get('/history').then((r) => {
          answered++;
          return r.status;
        }),
      );
      const waiting = async () =>
        Number(
          (
            await db.query(
              `SELECT count(*) AS n FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE studio_sessions%'`,
            )
          ).rows[0].n,
        );
      await waitFor(
        'a write of last_seen_at waiting on the row',
        async () => (await waiting()) >= 1,
      );
      // The others do not queue behind that write: they answer while it still waits.
      await waitFor('23 pages answered', () => answered >= 23, { timeoutMs: 20_000 });
      expect(await waiting()).toBe(1);
      await lock.query('COMMIT');
      expect(await Promise.all(answers)).toEqual(answers.map(() => 200));
      expect((await db.query('SELECT n FROM touch_count')).rows[0].n).toBe(1);
    } finally {
      await lock.query('ROLLBACK').catch(() => undefined);
      lock.release();
      await db.query('DROP TRIGGER count_touch ON studio_sessions');
      await db.query('DROP FUNCTION count_touch(); DROP TABLE touch_count');
    }
  });

  it('throttles sign-in per address too, whatever the email', async () => {
    // An address of its own: the service remembers the refusal (below) for the rest of the file.
    const s = new StudioSession(f.svc.base, f.svc.base, '127.0.0.91');
    const email = await s.signUp();
    await s.post('/signout', {});
    await s.get('/signin');
    // As if this address had failed 100 times in the last quarter hour, on other emails.
    const w = Math.floor(Date.now() / 1000 / 900) * 900;
    await f.dbh.db.query(
      `INSERT INTO studio_attempts (scope, window_start, attempts) VALUES ('signin-ip:127.0.0.91', $1, 100)
      ON CONFLICT (scope, window_start) DO UPDATE SET attempts = studio_attempts.attempts + 100`,
      [w],
    );
    try {
      expect((await s.post('/signin', { email, password: PASSWORD })).status).toBe(429);
    } finally {
      await f.dbh.db.query(`DELETE FROM studio_attempts WHERE scope = 'signin-ip:127.0.0.91'`);
    }
    // The database's refusal holds in this process until its retry-after (it is not asked again).
    const again = await s.post('/signin', { email, password: PASSWORD });
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
    // The owner, from another address, signs in.
    const owner = new StudioSession(f.svc.base, f.svc.base, '127.0.0.92');
    await owner.get('/signin');
    expect((await owner.post('/signin', { email, password: PASSWORD })).status).toBe(303);
  });

  it('makes invite and reset links single-use and expiring', async () => {
    const email = uniqueEmail();
    const invite = await inviteLink(f.dbh.db, f.svc.base, email);
    const path = new URL(invite.link).pathname;
    const s = new StudioSession(f.svc.base);
    expect((await s.get(path)).status).toBe(200);
    const [first, second] = await Promise.all([
      s.post(path, { password: 'first password!' }),
      s.post(path, { password: 'second password' }),
    ]);
    expect([first.status, second.status].sort()).toEqual([303, 410]);
    expect((await s.get(path)).status).toBe(410);

    const accountId = await accountIdOf(f.dbh.db, email);
    const expiring = await issueToken(f.dbh.db, accountId, 'reset', 1);
    await waitFor(
      'the link to expire',
      async () => {
        expect((await s.get(`/reset/${expiring}`)).status).toBe(410);
        return true;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect((await s.post(`/reset/${expiring}`, { password: 'a new password' })).status).toBe(410);
    // an invite link is not a reset link
    const inv2 = await issueToken(f.dbh.db, accountId, 'invite');
    expect((await s.get(`/reset/${inv2}`)).status).toBe(410);
  });

  it('keeps one-time links out of the access log', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      {
        write: (l: string) => {
          lines.push(l);
        },
      },
    );
    const svc = await startTestService(f.dbh.url, { role: 'api', logger });
    try {
      const invite = await inviteLink(f.dbh.db, svc.base, uniqueEmail());
      const token = invite.link.split('/').pop()!;
      const s = new StudioSession(svc.base);
      expect((await s.get(`/invite/${token}`)).status).toBe(200);
      expect((await s.post(`/invite/${token}`, { password: 'a fine password' })).status).toBe(303);
      await s.get('/history');
      expect(lines.some((l) => l.includes('/history'))).toBe(true); // the log is on
      expect(lines.filter((l) => l.includes(token))).toEqual([]);
    } finally {
      await svc.stop();
    }
  });
});
