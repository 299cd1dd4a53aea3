// The studio's doors attacked as a stranger would (docs/account-limits.md), over real HTTP from several
// source addresses on loopback (127.0.0.2, 127.0.0.3, …): wrong passwords counted before they are
// checked, per email and address with a ceiling per email; the operator console throttled per address
// only; sign-ups limited per address and silent about which emails exist.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { ADMIN, startTestService, type TestService } from '../helpers/service.ts';
import { PASSWORD, uniqueEmail } from './helpers.ts';
import { StudioSession } from './http-session.ts';
import { waitFor } from '../helpers/wait.ts';
import { startMailingService } from './mailbox.ts';

const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '0' } });
/** A second node on the same database with tighter limits and another admin token. */
let tight: TestService;
const OTHER_ADMIN = 'another-admin-token-0123456789';
beforeAll(async () => {
  tight = await startTestService(f.dbh.url, {
    env: {
      RENDERGATE_WORKER_CONCURRENCY: '0',
      RENDERGATE_SIGNUPS_PER_HOUR: '3',
      RENDERGATE_ADMIN_TOKEN: OTHER_ADMIN,
    },
  });
});
afterAll(async () => {
  await tight?.stop();
});

const from = (ip: string, base = f.svc.base) => new StudioSession(base, base, ip);

describe('wrong passwords', () => {
  it('checks at most 10 of 100 parallel wrong passwords from one address; the right one still works from another', async () => {
    const email = await from('127.0.0.1').signUp();
    const attacker = from('127.0.0.2');
    await attacker.get('/signin');
    const answers = await Promise.all(
      Array.from({ length: 100 }, () =>
        attacker.post('/signin', { email, password: 'not the password' }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(90);
    const refused = answers.find((a) => a.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.text).toContain('Too many sign-in attempts');
    // The right password from the throttled address waits too…
    expect((await attacker.post('/signin', { email, password: PASSWORD })).status).toBe(429);
    // …but the owner, elsewhere, signs in.
    const owner = from('127.0.0.3');
    await owner.get('/signin');
    expect((await owner.post('/signin', { email, password: PASSWORD })).status).toBe(303);
    expect((await owner.get('/history')).status).toBe(200);
  });

  it('stops at 100 wrong passwords per email from all addresses, and does not count right ones', async () => {
    const email = await from('127.0.0.1').signUp();
    // The owner signs in 12 times from one address: right passwords never add up to a lock.
    const owner = from('127.0.0.40');
    await owner.get('/signin');
    for (let i = 0; i < 12; i++)
      expect((await owner.post('/signin', { email, password: PASSWORD })).status).toBe(303);
    // 10 addresses, 10 wrong passwords each, in parallel: all 100 are checked.
    const wrongFrom = (prefix: string, n: number) =>
      Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const s = from(`${prefix}${i + 1}`);
          await s.get('/signin');
          return Promise.all(
            Array.from({ length: 10 }, () =>
              s.post('/signin', { email, password: 'wrong wrong wrong' }),
            ),
          );
        }),
      );
    const answers = await wrongFrom('127.0.1.', 10);
    expect(answers.flat().map((a) => a.status)).toEqual(Array(100).fill(401));
    // The email's ceiling is met: an 11th address's wrong passwords are refused (its own counts
    // still hold them: past the ceiling a password is checked only within the address's limits).
    const more = await wrongFrom('127.0.1.1', 1);
    expect(more.flat().map((a) => a.status)).toEqual(Array(10).fill(429));
    // A right password from a fresh address is not signed in at once either: it would go on to
    // the second factor or a mailed sign-in link (test/studio/two-factor.test.ts); this node has
    // neither, so it is refused.
    const late = from('127.0.2.1');
    await late.get('/signin');
    expect((await late.post('/signin', { email, password: PASSWORD })).status).toBe(429);
  });
});

describe('a throttled address', () => {
  it('is refused by the node the database refused it on, without asking the database again', async () => {
    const email = await from('127.0.3.9').signUp();
    const attacker = from('127.0.3.1');
    await attacker.get('/signin');
    for (let i = 0; i < 10; i++)
      expect((await attacker.post('/signin', { email, password: 'wrong wrong' })).status).toBe(401);
    // The 11th: the database refuses it (the pair is full), and this node remembers until when.
    const first = await attacker.post('/signin', { email, password: 'wrong wrong' });
    expect(first.status).toBe(429);
    // The database forgets the count, as if the window were over: a try that asked it would be let in.
    await f.dbh.db.query(`DELETE FROM studio_attempts WHERE scope LIKE '%127.0.3.1%'`);
    const again = await attacker.post('/signin', { email, password: PASSWORD });
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(
      (await f.dbh.db.query(`SELECT 1 FROM studio_attempts WHERE scope LIKE '%127.0.3.1%'`)).rows,
    ).toHaveLength(0);
    // Another node on the same database never saw that refusal: it asks the database, the one
    // count, and counts this try there.
    const elsewhere = from('127.0.3.1', tight.base);
    await elsewhere.get('/signin');
    expect((await elsewhere.post('/signin', { email, password: 'wrong wrong' })).status).toBe(401);
    const { rows } = await f.dbh.db.query<{ attempts: number }>(
      `SELECT attempts FROM studio_attempts WHERE scope LIKE 'signin-pair:127.0.3.1|%'`,
    );
    expect(rows.map((r) => r.attempts)).toEqual([1]);
  });
});

describe('operator console', () => {
  it('throttles wrong tokens per address only: the operator still signs in from elsewhere', async () => {
    const attacker = from('127.0.0.4');
    await attacker.get('/admin');
    const tries = await Promise.all(
      Array.from({ length: 30 }, () =>
        attacker.post('/admin/signin', { token: 'wrong token, wrong token' }),
      ),
    );
    expect(tries.filter((t) => t.status === 401)).toHaveLength(10);
    expect(tries.filter((t) => t.status === 429)).toHaveLength(20);
    expect((await attacker.post('/admin/signin', { token: ADMIN })).status).toBe(429);
    const operator = from('127.0.0.5');
    await operator.get('/admin');
    expect((await operator.post('/admin/signin', { token: ADMIN })).status).toBe(303);
    expect((await operator.get('/admin')).text).toContain('Accounts');
  });

  it('ends console sessions when the admin token changes', async () => {
    const operator = from('127.0.0.6');
    await operator.get('/admin');
    expect((await operator.post('/admin/signin', { token: ADMIN })).status).toBe(303);
    expect((await operator.get('/admin')).text).toContain('Accounts');
    // The same session cookie at a node of the same database whose admin token is another one.
    const elsewhere = new StudioSession(tight.base, tight.base, '127.0.0.6');
    elsewhere.cookies = new Map(operator.cookies);
    const page = await elsewhere.get('/admin');
    expect(page.text).toContain('Operator sign-in');
    expect(page.text).not.toContain('Accounts');
    expect(
      (await elsewhere.get('/admin/accounts/acct_0190d3a8f5a97b2c8d1e4f5a6b7c8d9e')).status,
    ).toBe(303);
  });
});

describe('sign-up', () => {
  it('allows RENDERGATE_SIGNUPS_PER_HOUR sign-ups per address, counted in parallel', async () => {
    const s = from('127.0.0.7', tight.base);
    await s.get('/signup');
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        s.post('/signup', { email: uniqueEmail(), password: PASSWORD }),
      ),
    );
    expect(answers.filter((a) => a.status === 303)).toHaveLength(3);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(7);
    expect(Number(refused[0].headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused[0].text).toContain('Too many accounts');
    // Another address is not affected.
    const other = from('127.0.0.8', tight.base);
    await other.get('/signup');
    expect((await other.post('/signup', { email: uniqueEmail(), password: PASSWORD })).status).toBe(
      303,
    );
  });

  it('answers a sign-up with a taken email as it answers a new one', async () => {
    const taken = await from('127.0.0.1').signUp();
    const answer = async (email: string, password: string) => {
      const s = from('127.0.0.9');
      await s.get('/signup');
      const r = await s.post('/signup', { email, password });
      const cookies = r.headers.getSetCookie().map((c) => c.replace(/=[^;]*/, '=…'));
      return { status: r.status, location: r.location, cookies, body: r.text, s };
    };
    const fresh = await answer(uniqueEmail(), 'another good password');
    const wrong = await answer(taken, 'another good password');
    expect({ ...wrong, s: null }).toEqual({ ...fresh, s: null });
    expect(fresh.status).toBe(303);
    // The taken account was not opened by it…
    const landed = await wrong.s.get('/');
    expect([landed.status, landed.headers.get('location')]).toEqual([303, '/signin?next=%2F']);
    // …and its owner, giving their own password, is simply signed in.
    const right = await answer(taken, PASSWORD);
    expect([right.status, right.location]).toEqual([303, '/']);
    expect((await right.s.get('/account')).text).toContain(taken);
  });

  it('tells the owner of a taken email by mail, where mail is set up, and sends nothing for a new one', async () => {
    const { svc, mails, stop } = await startMailingService(f.dbh.url);
    try {
      const taken = await from('127.0.0.1', svc.base).signUp();
      const fresh = uniqueEmail();
      const s = from('127.0.0.10', svc.base);
      await s.get('/signup');
      expect((await s.post('/signup', { email: fresh, password: PASSWORD })).status).toBe(303);
      expect(
        (await s.post('/signup', { email: taken, password: 'not the owner password' })).status,
      ).toBe(303);
      await waitFor('the mail', () => mails.length > 0, { timeoutMs: 30_000, intervalMs: 100 });
      expect(mails.map((m) => m.to)).toEqual([taken]);
      expect(mails[0].body).toContain('Someone tried to create a Rendergate account');
    } finally {
      await stop();
    }
  });
});
