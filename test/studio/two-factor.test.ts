// The TOTP second factor and the owner who cannot be locked out (docs/studio.md "Signing in"):
// turning it on and off, each code once (across parallel requests), a clock 90 s off refused,
// recovery codes however typed, wrong codes counted, an account's requirement, and the right
// password past the per-email ceiling going on to a code or a mailed link. Against the real
// service, its database and a real SMTP server (mailbox.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/db.ts';
import { waitFor } from '../helpers/wait.ts';
import { startMailingService, type Mail } from './mailbox.ts';
import { StudioSession } from './http-session.ts';
import { accountIdOf, PASSWORD } from './helpers.ts';
import { codeAt } from '../../src/services/totp.ts';
import { pruneSignInFlows } from '../../src/db/sign-in-flows.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let mails: Mail[];
let stop: () => Promise<void>;
beforeAll(async () => {
  dbh = await freshDatabase();
  ({ svc, mails, stop } = await startMailingService(dbh.url));
});
afterAll(async () => {
  await stop?.();
  await dbh?.drop();
});

const STEP_MS = 30_000;

/** A new account whose owner has turned two-factor on: its session, email, secret, codes. */
async function withFactor() {
  const s = new StudioSession(svc.base);
  const email = await s.signUp();
  await s.get('/account');
  const started = await s.post('/account/two-factor/start', {});
  expect(started.status).toBe(200);
  expect(started.text).toMatch(/<img src="data:image\/png;base64,[^"]+"[^>]*alt="QR code/);
  const secret = /id="totp-key" readonly value="([A-Z2-7 ]+)"/.exec(started.text)![1];
  const key = secret.replace(/ /g, '');
  s.csrf = /name="_csrf" value="([^"]+)"/.exec(started.text)![1];
  const wrong = await s.post('/account/two-factor/confirm', { code: '000000' });
  expect(wrong.status).toBe(400);
  expect(wrong.text).toContain('That code is wrong');
  const on = await s.post('/account/two-factor/confirm', { code: codeAt(key, Date.now()) });
  expect(on.status).toBe(200);
  const codes = [...on.text.matchAll(/<li>([A-Z0-9]{5}-[A-Z0-9]{5})<\/li>/g)].map((m) => m[1]);
  expect(codes).toHaveLength(10);
  return { s, email, key, codes, accountId: await accountIdOf(dbh.db, email) };
}

/** Signs in with the password up to the code's page; the session waiting for its code. */
async function toCode(email: string, from?: string, base = svc.base) {
  const s = new StudioSession(base, base, from);
  await s.get('/signin');
  const r = await s.post('/signin', { email, password: PASSWORD });
  expect(r.status).toBe(303);
  expect(r.location).toBe('/signin/code');
  expect(s.cookies.has('rg_session')).toBe(false);
  expect((await s.get('/signin/code')).status).toBe(200);
  return s;
}

const actions = async (accountId: string) =>
  (
    await dbh.db.query(
      'SELECT action, details FROM audit_events WHERE account_id = $1 ORDER BY seq',
      [accountId],
    )
  ).rows as { action: string; details: Record<string, unknown> }[];

/** Waits until the next 30 s step has at least `ms` to run, so codes of "now" stay of one step. */
const awayFromStepEdge = (ms = 5000) =>
  waitFor('a step with time left', () => STEP_MS - (Date.now() % STEP_MS) > ms, {
    timeoutMs: STEP_MS,
  });

describe('two-factor', () => {
  it('is turned on with a first code, and then asked for at sign-in', async () => {
    await awayFromStepEdge();
    const { email, key, accountId } = await withFactor();
    const s = await toCode(email);
    // a clock 90 s off (three steps) is refused, and the refusal is audited as a failure
    const late = await s.post('/signin/code', { code: codeAt(key, Date.now() - 90_000) });
    expect(late.status).toBe(401);
    expect(late.text).toContain('That code is wrong');
    // one step ahead (30 s of drift) is accepted
    const ok = await s.post('/signin/code', { code: codeAt(key, Date.now() + STEP_MS) });
    expect(ok.status).toBe(303);
    expect(s.cookies.has('rg_session')).toBe(true);
    expect((await s.get('/keys')).status).toBe(200);
    // the same code again, in another sign-in: refused (its step is used)
    const again = await toCode(email);
    const replay = await again.post('/signin/code', {
      code: codeAt(key, Date.now() + STEP_MS),
    });
    expect(replay.status).toBe(401);
    // the challenge is used once: after a right code it is gone
    expect((await s.post('/signin/code', { code: '123456' })).status).toBe(410);
    const log = await actions(accountId);
    expect(log.map((e) => e.action)).toEqual(
      expect.arrayContaining(['two_factor.enabled', 'session.sign_in_failed']),
    );
    expect(log.find((e) => e.action === 'session.sign_in_failed')?.details.reason).toBe('code');
    expect(log.filter((e) => e.action === 'session.signed_in').at(-1)?.details.via).toBe(
      'password+totp',
    );
    expect(JSON.stringify(log)).not.toContain(key);
  });

  it('accepts one code once, however many ask with it at once, on two processes', async () => {
    const other = await startTestService(dbh.url, { role: 'api' });
    try {
      await awayFromStepEdge();
      const { email, key, codes } = await withFactor();
      const sessions = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          toCode(email, '127.0.0.81', i % 2 ? other.base : svc.base),
        ),
      );
      const code = codeAt(key, Date.now() + STEP_MS);
      const answers = await Promise.all(sessions.map((s) => s.post('/signin/code', { code })));
      expect(answers.map((a) => a.status).sort()).toEqual([303, 401, 401, 401, 401, 401]);
      // and a recovery code likewise (from another address: the five wrong above count in the
      // address and email's ten)
      const again = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          toCode(email, '127.0.0.82', i % 2 ? other.base : svc.base),
        ),
      );
      const used = await Promise.all(again.map((s) => s.post('/signin/code', { code: codes[0] })));
      expect(used.map((a) => a.status).sort()).toEqual([303, 401, 401, 401, 401, 401]);
    } finally {
      await other.stop();
    }
  });

  it('takes a recovery code typed with spaces and lower case, once', async () => {
    const { email, codes, accountId } = await withFactor();
    const typed = ` ${codes[3].replace('-', ' ').toLowerCase()} `;
    const s = await toCode(email);
    expect((await s.post('/signin/code', { code: typed })).status).toBe(303);
    const t = await toCode(email);
    expect((await t.post('/signin/code', { code: codes[3] })).status).toBe(401);
    expect((await t.post('/signin/code', { code: codes[4] })).status).toBe(303);
    const stored = await dbh.db.query(
      `SELECT count(*)::int AS n, count(used_at)::int AS used FROM recovery_codes r
         JOIN memberships m ON m.person_id = r.person_id WHERE m.account_id = $1`,
      [accountId],
    );
    expect(stored.rows[0]).toEqual({ n: 10, used: 2 });
    // only hashes are stored
    const raw = await dbh.db.query('SELECT code_hash FROM recovery_codes');
    for (const r of raw.rows as { code_hash: Buffer }[])
      expect(r.code_hash.toString('latin1')).not.toContain(codes[3].slice(0, 5));
  });

  it('counts wrong codes like wrong passwords, and refuses past the limit', async () => {
    const { email } = await withFactor();
    const s = await toCode(email, '127.0.0.61');
    for (let i = 0; i < 10; i++)
      expect((await s.post('/signin/code', { code: '000000' })).status).toBe(401);
    // the address and email's ten are spent: refused now, whatever the code
    const refused = await s.post('/signin/code', { code: '000000' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('is turned off only with a code', async () => {
    await awayFromStepEdge();
    const { s, key, accountId } = await withFactor();
    await s.get('/account');
    const wrong = await s.post('/account/two-factor/disable', { code: '111111' });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('two-factor stays on');
    const off = await s.post('/account/two-factor/disable', {
      code: codeAt(key, Date.now() + STEP_MS),
    });
    expect(off.status).toBe(200);
    expect(off.text).toContain('Turn on two-factor');
    expect((await actions(accountId)).map((e) => e.action)).toContain('two_factor.disabled');
    expect(
      (
        await dbh.db.query(
          'SELECT 1 FROM recovery_codes r JOIN memberships m ON m.person_id = r.person_id WHERE m.account_id = $1',
          [accountId],
        )
      ).rowCount,
    ).toBe(0);
  });

  it("an owner's requirement sends members without it to turn it on", async () => {
    const s = new StudioSession(svc.base);
    const email = await s.signUp();
    const accountId = await accountIdOf(dbh.db, email);
    await s.get('/account');
    expect((await s.post('/account/two-factor/require', { required: 'true' })).status).toBe(200);
    const keys = await s.get('/keys');
    expect(keys.status).toBe(303);
    expect(keys.headers.get('location')).toBe('/account?two-factor=required');
    const account = await s.get('/account?two-factor=required');
    expect(account.text).toContain('This account requires two-factor');
    expect((await s.post('/keys', { name: 'x' })).status).toBe(403);
    // turned on, every page opens again
    const started = await s.post('/account/two-factor/start', {});
    const key = /id="totp-key" readonly value="([A-Z2-7 ]+)"/
      .exec(started.text)![1]
      .replace(/ /g, '');
    s.csrf = /name="_csrf" value="([^"]+)"/.exec(started.text)![1];
    await s.post('/account/two-factor/confirm', { code: codeAt(key, Date.now()) });
    expect((await s.get('/keys')).status).toBe(200);
    const log = await actions(accountId);
    expect(log.find((e) => e.details.scope === 'account')).toEqual({
      action: 'two_factor.enabled',
      details: { scope: 'account', required: true },
    });
  });
});

describe('the janitor', () => {
  it('removes challenges and OIDC requests a day past their end, and only those', async () => {
    const person = 'usr_janitor';
    await dbh.db.query(
      `INSERT INTO people (id, email) VALUES ($1, 'janitor@example.test') ON CONFLICT DO NOTHING`,
      [person],
    );
    for (const [hash, ago] of [
      ['old', '2 days'],
      ['new', '1 hour'],
    ]) {
      await dbh.db.query(
        `INSERT INTO sign_in_challenges (id_hash, person_id, via, expires_at)
         VALUES ($1, $2, 'password', now() - $3::interval)`,
        [Buffer.from(`c-${hash}`), person, ago],
      );
      await dbh.db.query(
        `INSERT INTO oidc_requests (state_hash, browser_hash, nonce, code_verifier, expires_at)
         VALUES ($1, $1, 'n', 'v', now() - $2::interval)`,
        [Buffer.from(`o-${hash}`), ago],
      );
    }
    await pruneSignInFlows(dbh.db);
    const left = await dbh.db.query(
      `SELECT convert_from(id_hash, 'UTF8') AS k FROM sign_in_challenges WHERE id_hash IN ($1, $2)
       UNION ALL SELECT convert_from(state_hash, 'UTF8') FROM oidc_requests
        WHERE state_hash IN ($3, $4) ORDER BY 1`,
      ['c-old', 'c-new', 'o-old', 'o-new'].map((k) => Buffer.from(k)),
    );
    expect(left.rows.map((r: { k: string }) => r.k)).toEqual(['c-new', 'o-new']);
  });
});

describe('past the per-email ceiling', () => {
  const fillEmailScope = async (email: string) => {
    const w = Math.floor(Date.now() / 1000 / 900) * 900;
    await dbh.db.query(
      `INSERT INTO studio_attempts (scope, window_start, attempts) VALUES ($1, $2, 100)
       ON CONFLICT (scope, window_start) DO UPDATE SET attempts = 100`,
      [`signin-email:${email.toLowerCase()}`, w],
    );
  };

  it('a right password without a second factor signs in through a mailed link', async () => {
    const owner = new StudioSession(svc.base);
    const email = await owner.signUp();
    await fillEmailScope(email);
    const s = new StudioSession(svc.base, svc.base, '127.0.0.71');
    await s.get('/signin');
    // a wrong password is refused as before
    expect((await s.post('/signin', { email, password: 'not the password' })).status).toBe(429);
    const right = await s.post('/signin', { email, password: PASSWORD });
    expect(right.status).toBe(202);
    expect(right.text).toContain('we mailed you a sign-in link');
    expect(s.cookies.has('rg_session')).toBe(false);
    await waitFor('the link mailed', () => mails.some((m) => m.to === email));
    const body = mails.find((m) => m.to === email)!.body.replace(/=\r?\n/g, '');
    const path = new URL(/(http:\/\/\S+\/signin-link\/[\w-]+)/.exec(body)![1]).pathname;
    expect((await s.get(path)).status).toBe(200); // the page spends nothing
    const used = await s.post(path, {});
    expect(used.status).toBe(303);
    expect(s.cookies.has('rg_session')).toBe(true);
    expect((await s.post(path, {})).status).toBe(410);
  });

  it('a right password with a second factor goes on to the code', async () => {
    await awayFromStepEdge();
    const { email, key } = await withFactor();
    await fillEmailScope(email);
    const s = await toCode(email, '127.0.0.72');
    expect((await s.post('/signin/code', { code: codeAt(key, Date.now() + STEP_MS) })).status).toBe(
      303,
    );
  });
});
