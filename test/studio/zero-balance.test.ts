// No dead end at €0 (docs/billing.md "An account at €0"), tried as a new person would over HTTP:
// open sign-up without Stripe shows, before any render, the operator's words on how to get credit
// and a link to make a test key (preset to Test); with an operator's sign-up credit, each sign-up
// the per-address bound lets through is credited through the ledger (an entry, a receipt, an audit
// event), and the ones it refuses get nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { StudioSession } from './http-session.ts';
import { uniqueEmail } from './helpers.ts';

const WORDS = 'Write to billing@example.test with your account id to buy credit.';
let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let plain: TestService;
let generous: TestService;
beforeAll(async () => {
  dbh = await freshDatabase();
  plain = await startTestService(dbh.url, {
    role: 'api',
    env: { RENDERGATE_CREDIT_HELP: WORDS },
  });
  generous = await startTestService(dbh.url, {
    role: 'api',
    env: { RENDERGATE_SIGNUP_CREDIT_CENTS: '300', RENDERGATE_SIGNUPS_PER_HOUR: '2' },
  });
});
afterAll(async () => {
  await plain?.stop();
  await generous?.stop();
  await dbh?.drop();
});

const q = async (sql: string, params: unknown[]) => (await dbh.db.query(sql, params)).rows;

describe('an account at €0', () => {
  it('is told how to get credit and offered a test key, before its first render', async () => {
    const s = new StudioSession(plain.base);
    await s.signUp();
    for (const path of ['/', '/usage', '/models/rendergate/image-to-video']) {
      const p = await s.get(path);
      expect(p.status, path).toBe(200);
      expect(p.text, path).toContain('No credit yet: €0.00');
      expect(p.text, path).toContain(WORDS);
      expect(p.text, path).toContain('href="/keys?mode=test"');
      expect(p.text, path).not.toContain('href="/credit"'); // no Stripe here
    }
    const keys = await s.get('/keys?mode=test');
    expect(keys.text).toMatch(/<option value="test" selected>/);
  });

  it('gets the sign-up credit, within the sign-ups per address', async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const s = new StudioSession(generous.base, generous.base, '127.0.0.7');
      const email = uniqueEmail();
      await s.get('/signup');
      const r = await s.post('/signup', { email, password: 'correct horse battery' });
      if (r.status === 303) made.push(email);
      else expect(r.status).toBe(429);
      if (i === 0) {
        await s.get('/');
        expect((await s.get('/')).text).not.toContain('No credit yet');
      }
    }
    expect(made.length).toBe(2);
    for (const email of made) {
      const [a] = await q('SELECT id, balance_cents FROM accounts WHERE email = $1', [email]);
      expect(a.balance_cents).toBe(300);
      const e = await q('SELECT id, reason FROM ledger_entries WHERE account_id = $1', [a.id]);
      expect(e.map((x) => x.reason)).toEqual(['Sign-up credit']);
      expect(await q('SELECT 1 FROM receipts WHERE entry_id = $1', [e[0].id])).toHaveLength(1);
      const audit = await q(
        `SELECT details->>'via' AS via FROM audit_events
          WHERE account_id = $1 AND action = 'credit.added'`,
        [a.id],
      );
      expect(audit).toEqual([{ via: 'signup' }]);
    }
  });
});
