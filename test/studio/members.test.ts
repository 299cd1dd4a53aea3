// The Members page (docs/api.md "Teams: members and roles"): invite by link, join as a new or a
// known person, roles, removal ending sessions and keys, invites voided and revoked, leaving, the
// switcher, and an account never left without an owner, also when two owners race.
import { describe, expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { StudioSession } from './http-session.ts';
import { PASSWORD, uniqueEmail } from './helpers.ts';
import { ADMIN } from '../helpers/service.ts';

const f = serviceFixture();

const linkIn = (html: string) => /id="invite-link" readonly value="([^"]+)"/.exec(html)![1];
const pathOf = (link: string) => new URL(link).pathname;
const userIdOf = async (email: string) =>
  (
    await f.dbh.db.query<{ id: string }>('SELECT id FROM people WHERE lower(email) = lower($1)', [
      email,
    ])
  ).rows[0].id;
const rolesOf = async (email: string) =>
  (
    await f.dbh.db.query<{ role: string }>(
      `SELECT m.role FROM memberships m JOIN accounts a ON a.id = m.account_id
        WHERE a.email = $1 ORDER BY m.role`,
      [email],
    )
  ).rows.map((r) => r.role);

/** An owner signed up, and `email` invited as `role`: the join link's path. */
async function invite(owner: StudioSession, email: string, role: string) {
  await owner.get('/members');
  const r = await owner.post('/members/invite', { email, role });
  expect(r.status, r.text.slice(0, 500)).toBe(201);
  return pathOf(linkIn(r.text));
}

/** A new person following a join link: their session (a link not live is its page, 410). */
async function join(path: string, password = PASSWORD) {
  const s = new StudioSession(f.svc.base);
  const shown = await s.get(path);
  if (shown.status !== 200) return { s, r: { ...shown, location: null } };
  const r = await s.post(path, { password });
  return { s, r };
}

describe('Members', () => {
  it('invite, join as a new person, a key they make says who, removal ends their session and keys', async () => {
    const owner = new StudioSession(f.svc.base);
    const ownerEmail = await owner.signUp();
    const devEmail = uniqueEmail();
    const path = await invite(owner, devEmail, 'developer');
    const page = await new StudioSession(f.svc.base).get(path);
    expect(page.text).toContain('as <strong>developer</strong>');
    const { s: dev, r } = await join(path);
    expect(r.status).toBe(303);
    expect((await dev.get('/keys')).status).toBe(200);
    expect((await dev.post('/keys', { name: 'dev key' })).status).toBe(201);
    const keys = await owner.get('/keys');
    expect(keys.text).toContain(devEmail);
    const members = await owner.get('/members');
    expect(members.text).toContain(devEmail);
    expect(members.text).toContain(`${ownerEmail} (you)`);
    // the link works once
    expect((await join(path)).r.status).toBe(410);
    // removed, keys revoked: the old cookie opens nothing in that account
    const id = await userIdOf(devEmail);
    await owner.get('/members');
    const removed = await owner.post(`/members/${id}/remove`, { revokeKeys: 'on' });
    expect(removed.status).toBe(303);
    const after = await dev.get('/keys');
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toMatch(/^\/signin/);
    const { rows } = await f.dbh.db.query("SELECT revoked_at FROM api_keys WHERE name = 'dev key'");
    expect(rows[0].revoked_at).not.toBeNull();
    const audit = await f.dbh.db.query<{ action: string }>(
      `SELECT action FROM audit_events WHERE account_id = (SELECT id FROM accounts WHERE email = $1)
        ORDER BY seq`,
      [ownerEmail],
    );
    expect(audit.rows.map((e) => e.action)).toEqual(
      expect.arrayContaining(['member.invited', 'member.joined', 'member.removed']),
    );
  });

  it('refuses a malformed email and a role that does not exist; voided, revoked, expired links say so', async () => {
    const owner = new StudioSession(f.svc.base);
    await owner.signUp();
    await owner.get('/members');
    const bad = await owner.post('/members/invite', { email: 'not-an-email', role: 'viewer' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('The email not an email address.');
    const role = await owner.post('/members/invite', { email: uniqueEmail(), role: 'emperor' });
    expect(role.status).toBe(400);
    expect(role.text).toContain('The role must be one of owner, admin');
    const email = uniqueEmail();
    const first = await invite(owner, email, 'viewer');
    const second = await invite(owner, email, 'billing');
    expect((await new StudioSession(f.svc.base).get(first)).status).toBe(410);
    expect((await new StudioSession(f.svc.base).get(second)).status).toBe(200);
    await owner.get('/members');
    expect((await owner.post('/members/invites/revoke', { email })).status).toBe(303);
    const gone = await join(second);
    expect(gone.r.status).toBe(410);
    expect(gone.r.text).toContain('This invite is not valid');
    const third = await invite(owner, email, 'viewer');
    await f.dbh.db.query(
      "UPDATE member_invites SET expires_at = now() - interval '1 second' WHERE email = $1",
      [email],
    );
    expect((await join(third)).r.status).toBe(410);
    expect(await f.dbh.db.query('SELECT 1 FROM people WHERE email = $1', [email])).toMatchObject({
      rowCount: 0,
    });
  });

  it('a known person signs in to join; the switcher moves between their accounts', async () => {
    const a = new StudioSession(f.svc.base);
    const aEmail = await a.signUp();
    const b = new StudioSession(f.svc.base);
    const bEmail = await b.signUp();
    const path = await invite(a, bEmail, 'viewer');
    const page = await new StudioSession(f.svc.base).get(path);
    expect(page.text).toContain('Sign in and join');
    const wrong = await join(path, 'not the password at all');
    expect(wrong.r.status, wrong.r.text.slice(0, 2000)).toBe(401);
    const { s, r } = await join(path);
    expect(r.status).toBe(303);
    const home = await s.get('/members');
    expect(home.text).toContain('<label for="account-switch">Account</label>');
    expect(home.text).toContain(aEmail);
    // a viewer may not invite: no form, and a crafted post is a 403 page
    expect(home.text).not.toContain('action="/members/invite"');
    const crafted = await s.post('/members/invite', { email: uniqueEmail(), role: 'viewer' });
    expect(crafted.status).toBe(403);
    expect(crafted.text).toContain('Your role (viewer) may not invite members');
    const own = (await f.dbh.db.query('SELECT id FROM accounts WHERE email = $1', [bEmail]))
      .rows[0];
    expect((await s.post('/switch-account', { account: own.id, next: '/keys' })).status).toBe(303);
    expect((await s.get('/keys')).text).toContain('Create key');
    const other = (await f.dbh.db.query("SELECT 'acct_' || repeat('0', 32) AS id")).rows[0];
    expect((await s.post('/switch-account', { account: other.id })).status).toBe(403);
  });

  it('never leaves an account without an owner: leaving, demoting, and two owners demoting each other at once', async () => {
    const a = new StudioSession(f.svc.base);
    const aEmail = await a.signUp();
    const aId = await userIdOf(aEmail);
    await a.get('/members');
    const leave = await a.post(`/members/${aId}/remove`, {});
    expect(leave.status).toBe(409);
    expect(leave.text).toContain('An account always has an owner');
    const bEmail = uniqueEmail();
    const { s: b } = await join(await invite(a, bEmail, 'admin'));
    const bId = await userIdOf(bEmail);
    // an admin may not make an owner
    await b.get('/members');
    const up = await b.post(`/members/${bId}/role`, { role: 'owner' });
    expect(up.status).toBe(403);
    await a.get('/members');
    expect((await a.post(`/members/${bId}/role`, { role: 'owner' })).status).toBe(303);
    await b.get('/members');
    await a.get('/members');
    const [x, y] = await Promise.all([
      a.post(`/members/${bId}/role`, { role: 'viewer' }),
      b.post(`/members/${aId}/role`, { role: 'viewer' }),
    ]);
    expect([x.status, y.status].sort()).toEqual([303, 409]);
    expect((await rolesOf(aEmail)).filter((r) => r === 'owner')).toHaveLength(1);
  });
});

describe('the admin API for members', () => {
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${f.svc.base}/admin/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it('lists, adds a known person at once and invites a new one, changes roles, removes; LAST_OWNER', async () => {
    const owner = new StudioSession(f.svc.base);
    const ownerEmail = await owner.signUp();
    const known = await new StudioSession(f.svc.base).signUp();
    const acct = (await f.dbh.db.query('SELECT id FROM accounts WHERE email = $1', [ownerEmail]))
      .rows[0].id as string;
    const listed = await admin('GET', `/accounts/${acct}/members`);
    expect(listed.body.data).toEqual([
      {
        userId: expect.stringMatching(/^usr_/),
        email: ownerEmail,
        role: 'owner',
        joinedAt: expect.any(String),
      },
    ]);
    const added = await admin('POST', `/accounts/${acct}/members`, {
      email: known,
      role: 'billing',
    });
    expect(added).toMatchObject({ status: 201, body: { status: 'added', role: 'billing' } });
    const invited = await admin('POST', `/accounts/${acct}/members`, {
      email: uniqueEmail(),
      role: 'viewer',
    });
    expect(invited).toMatchObject({ status: 201, body: { status: 'invited', userId: null } });
    expect(invited.body.link).toMatch(/\/join\//);
    for (const bad of [
      { email: 'nope', role: 'viewer' },
      { email: uniqueEmail(), role: 'god' },
    ]) {
      const r = await admin('POST', `/accounts/${acct}/members`, bad);
      expect(r).toMatchObject({ status: 400, body: { code: 'INVALID_INPUT' } });
    }
    const userId = added.body.userId as string;
    const patched = await admin('PATCH', `/accounts/${acct}/members/${userId}`, { role: 'admin' });
    expect(patched).toMatchObject({ status: 200, body: { userId, role: 'admin' } });
    const ownerId = listed.body.data[0].userId as string;
    const last = await admin('DELETE', `/accounts/${acct}/members/${ownerId}`);
    expect(last).toMatchObject({ status: 409, body: { code: 'LAST_OWNER' } });
    const demote = await admin('PATCH', `/accounts/${acct}/members/${ownerId}`, { role: 'viewer' });
    expect(demote).toMatchObject({ status: 409, body: { code: 'LAST_OWNER' } });
    expect(await admin('DELETE', `/accounts/${acct}/members/${userId}`)).toMatchObject({
      status: 200,
      body: { userId, removed: true },
    });
    expect(await admin('DELETE', `/accounts/${acct}/members/${userId}`)).toMatchObject({
      status: 404,
      body: { code: 'NOT_FOUND' },
    });
  });
});
