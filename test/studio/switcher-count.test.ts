// Whether the header lists a person's accounts comes from the person's row the session already
// reads (people.account_count, migrations/038, kept by src/db/sql/person_accounts.sql): it
// must stay exact when one person's memberships are added and removed at the same moment in many
// transactions, and the switcher must follow at once (and a removed member's session end at once).
import { describe, expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { StudioSession } from './http-session.ts';
import { uniqueEmail } from './helpers.ts';

const f = serviceFixture();
const q = (sql: string, v: unknown[] = []) => f.dbh.db.query(sql, v);

const SWITCHER = 'action="/switch-account"';

/** The count on a person's row, and how many memberships they have. */
async function counts(person: string) {
  const { rows } = await q(
    `SELECT account_count AS stored, (SELECT count(*)::int FROM memberships WHERE person_id = $1)
       AS rows FROM people WHERE id = $1`,
    [person],
  );
  return rows[0] as { stored: number; rows: number };
}

describe("the person's account count", () => {
  it('stays exact under memberships added and removed at once, from one account to 25', async () => {
    const owner = new StudioSession(f.svc.base);
    const email = await owner.signUp();
    const person = (await q('SELECT id FROM people WHERE email = $1', [email])).rows[0]
      .id as string;
    expect(await counts(person)).toEqual({ stored: 1, rows: 1 });
    // 30 other accounts; the person joins 24 of them in parallel, then leaves 12 while joining 6
    const others: string[] = [];
    for (let i = 0; i < 30; i++) {
      const made = await f.api.admin('POST', '/accounts', { email: uniqueEmail() });
      others.push(made.id as string);
    }
    const join = (a: string) =>
      q(`INSERT INTO memberships (account_id, person_id, role) VALUES ($1, $2, 'viewer')`, [
        a,
        person,
      ]);
    const leave = (a: string) =>
      q('DELETE FROM memberships WHERE account_id = $1 AND person_id = $2', [a, person]);
    await Promise.all(others.slice(0, 24).map(join));
    expect(await counts(person)).toEqual({ stored: 25, rows: 25 });
    await Promise.all([...others.slice(0, 12).map(leave), ...others.slice(24).map(join)]);
    expect(await counts(person)).toEqual({ stored: 19, rows: 19 });
    // down to one: the count follows, and every other person's count is theirs
    await Promise.all(others.slice(12).map(leave));
    expect(await counts(person)).toEqual({ stored: 1, rows: 1 });
    const strays = await q(
      `SELECT count(*)::int AS n FROM people p
        WHERE p.account_count <> (SELECT count(*) FROM memberships o WHERE o.person_id = p.id)`,
    );
    expect(strays.rows[0].n).toBe(0);
  });

  it('the switcher shows from the request after a join, and goes with the removal', async () => {
    const a = new StudioSession(f.svc.base);
    await a.signUp();
    const b = new StudioSession(f.svc.base);
    const bEmail = await b.signUp();
    expect((await b.get('/')).text).not.toContain(SWITCHER);
    // b joins a's account (as the admin API adds a known person: at once)
    const account = (
      await q(
        `SELECT m.account_id FROM memberships m JOIN people p ON p.id = m.person_id
          WHERE p.email <> $1 ORDER BY m.joined_at DESC LIMIT 1`,
        [bEmail],
      )
    ).rows[0].account_id as string;
    const added = await f.api.admin('POST', `/accounts/${account}/members`, {
      email: bEmail,
      role: 'viewer',
    });
    expect(added.status).toBe('added');
    expect((await b.get('/')).text).toContain(SWITCHER);
    await b.post('/switch-account', { account, next: '/' });
    expect((await b.get('/')).status).toBe(200);
    // removed from it: that session ends at once; back in their own account, no switcher
    await f.api.admin('DELETE', `/accounts/${account}/members/${added.userId}`);
    const gone = await b.get('/');
    expect(gone.status).toBe(303);
    const again = new StudioSession(f.svc.base);
    await again.get('/signin');
    await again.post('/signin', { email: bEmail, password: 'correct horse battery' });
    const home = await again.get('/');
    expect(home.status).toBe(200);
    expect(home.text).not.toContain(SWITCHER);
  });
});
