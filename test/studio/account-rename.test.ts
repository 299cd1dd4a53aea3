// Renaming an account (docs/studio.md "Account"): the owner's form on the Account page, the name
// checked, and `account.renamed` recorded in the rename's own transaction, so that under renames
// racing each other the log's from → to pairs link up and end at the name the row holds.
import { describe, expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { StudioSession } from './http-session.ts';
import { verifyChain } from '../../src/audit/verify.ts';

const f = serviceFixture();
const q = (sql: string, v: unknown[] = []) => f.dbh.db.query(sql, v);

async function owner() {
  const s = new StudioSession(f.svc.base);
  const email = await s.signUp();
  const account = (await q('SELECT id FROM accounts WHERE email = $1', [email])).rows[0]
    .id as string;
  await s.get('/account');
  return { s, email, account };
}

const renames = async (account: string) =>
  (
    await q(
      `SELECT actor, target, details FROM audit_events
        WHERE account_id = $1 AND action = 'account.renamed' ORDER BY seq`,
      [account],
    )
  ).rows as {
    actor: { email: string };
    target: unknown;
    details: { from: unknown; to: unknown };
  }[];

describe('renaming an account', () => {
  it('the owner renames it on the Account page; the audit log records who, from and to', async () => {
    const { s, email, account } = await owner();
    const page = await s.get('/account');
    expect(page.text).toContain('<label for="account-name">Account name</label>');
    const r = await s.post('/account/name', { name: '  Acme Studio  ' });
    expect(r.status).toBe(200);
    expect(r.text).toContain('The account is now Acme Studio.');
    expect(r.text).toContain('value="Acme Studio"');
    expect((await q('SELECT name FROM accounts WHERE id = $1', [account])).rows[0].name).toBe(
      'Acme Studio',
    );
    const [event] = await renames(account);
    expect(event.actor.email).toBe(email);
    expect(event.target).toEqual({ type: 'account', id: account });
    expect(event.details).toEqual({ from: null, to: 'Acme Studio' });
    // the same name again changes nothing and records nothing; empty removes the name
    await s.post('/account/name', { name: 'Acme Studio' });
    expect(await renames(account)).toHaveLength(1);
    const cleared = await s.post('/account/name', { name: '' });
    expect(cleared.text).toContain('The account has no name now.');
    expect((await renames(account)).at(-1)!.details).toEqual({ from: 'Acme Studio', to: null });
    // the chain holds
    expect((await verifyChain(f.dbh.db, account)).ok).toBe(true);
  });

  it('refuses a name too long or with a line break, with the field error, and records nothing', async () => {
    const { s, account } = await owner();
    const long = await s.post('/account/name', { name: 'x'.repeat(101) });
    expect(long.status).toBe(400);
    expect(long.text).toContain('The name may have at most 100 characters (this has 101).');
    expect(long.text).toContain('class="field has-error"');
    const broken = await s.post('/account/name', { name: 'two\nlines' });
    expect(broken.status).toBe(400);
    expect(broken.text).toContain('no line breaks or control characters');
    expect((await q('SELECT name FROM accounts WHERE id = $1', [account])).rows[0].name).toBeNull();
    expect(await renames(account)).toHaveLength(0);
  });

  it('racing renames: each event links to the one before, the last is the name kept', async () => {
    const { s, account } = await owner();
    const names = Array.from({ length: 12 }, (_, i) => `Team ${i}`);
    const answers = await Promise.all(names.map((name) => s.post('/account/name', { name })));
    expect(answers.map((a) => a.status)).toEqual(names.map(() => 200));
    const events = await renames(account);
    expect(events).toHaveLength(names.length);
    expect(events[0].details.from).toBeNull();
    for (let i = 1; i < events.length; i++)
      expect(events[i].details.from).toBe(events[i - 1].details.to);
    const kept = (await q('SELECT name FROM accounts WHERE id = $1', [account])).rows[0].name;
    expect(events.at(-1)!.details.to).toBe(kept);
  });
});
