// The audit log end to end (docs/api.md "Audit log"): each action of the contract that exists today
// leaves its event, with the actor from the principal and the request's address and user agent;
// the admin API pages them, the studio shows them to owners and admins and exports them as CSV that
// a spreadsheet cannot run; every chain written here verifies.
import { describe, expect, it } from 'vitest';
import { verifyChain } from '../../../src/audit/verify.ts';
import { AuditLog } from '../../../src/services/audit-log.ts';
import { memberPrincipal } from '../../../src/domain/principal.ts';
import { serviceFixture } from '../../helpers/fixture.ts';
import { ADMIN } from '../../helpers/service.ts';
import { waitFor } from '../../helpers/wait.ts';
import { PASSWORD } from '../../studio/helpers.ts';
import { StudioSession } from '../../studio/http-session.ts';

const f = serviceFixture();
const UA = { 'user-agent': 'audit-test/1.0' };

interface Ev {
  action: string;
  actor: { type: string; id: string | null; email?: string };
  target: { type: string; id: string } | null;
  ip: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
  id: string;
}

/** Every event of the account through the admin API, newest first, `limit` a page. */
async function allEvents(account: string, query = '', limit = 3): Promise<Ev[]> {
  const out: Ev[] = [];
  let cursor: string | null = null;
  do {
    const c: string = cursor ? `&cursor=${cursor}` : '';
    const r = await f.api.call(
      'GET',
      `/admin/v1/accounts/${account}/audit-events?limit=${limit}${query}${c}`,
      { key: ADMIN },
    );
    expect(r.status, r.text).toBe(200);
    out.push(...(r.json.data as Ev[]));
    cursor = r.json.nextCursor as string | null;
  } while (cursor);
  return out;
}

const idOf = async (email: string) =>
  (await f.dbh.db.query<{ id: string }>('SELECT id FROM accounts WHERE email = $1', [email]))
    .rows[0].id;

describe('the audit log', () => {
  it('records sign-ins, failed sign-ins, keys, webhooks and passwords from the studio', async () => {
    const s = new StudioSession(f.svc.base);
    const email = await s.signUp();
    const acct = await idOf(email);
    await s.get('/keys');
    expect((await s.post('/keys', { name: '=HYPERLINK("x")' }, { headers: UA })).status).toBe(201);
    const keyId = (
      await f.dbh.db.query<{ id: string }>('SELECT id FROM api_keys WHERE account_id = $1', [acct])
    ).rows[0].id;
    const formulaUa = { 'user-agent': '=1+2' };
    expect((await s.post(`/keys/${keyId}/revoke`, {}, { headers: formulaUa })).status).toBe(303);
    expect((await s.post(`/keys/${keyId}/revoke`, {})).status).toBe(303); // once is recorded
    await s.get('/webhooks');
    const made = await s.post('/webhooks', { url: 'http://127.0.0.1:9/hook', mode: 'live' });
    expect(made.status).toBe(201);
    const whe = (
      await f.dbh.db.query<{ id: string }>(
        'SELECT id FROM webhook_endpoints WHERE account_id = $1',
        [acct],
      )
    ).rows[0].id;
    expect((await s.post(`/webhooks/${whe}/delete`, {})).status).toBe(303);
    await s.get('/account');
    const changed = await s.post('/account/password', {
      current: PASSWORD,
      password: 'another horse battery',
    });
    expect(changed.status).toBe(200);
    // a wrong password for this email, then the right one
    const other = new StudioSession(f.svc.base);
    await other.get('/signin');
    const wrong = await other.post(
      '/signin',
      { email, password: 'not it at all' },
      { headers: UA },
    );
    expect(wrong.status).toBe(401);
    const count = async () =>
      (
        await f.dbh.db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM audit_events WHERE account_id = $1',
          [acct],
        )
      ).rows[0].n;
    await waitFor('the failed sign-in recorded', async () => (await count()) === 7);
    await other.get('/signin');
    const right = await other.post('/signin', { email, password: 'another horse battery' });
    expect(right.status).toBe(303);

    const events = await allEvents(acct);
    expect(events.map((e) => e.action)).toEqual([
      'session.signed_in',
      'session.sign_in_failed',
      'password.changed',
      'webhook_endpoint.deleted',
      'webhook_endpoint.created',
      'key.revoked',
      'key.created',
      'session.signed_in',
    ]);
    // the person who signed up, its owner (migrations/030 names them after the account)
    const member = { type: 'member', id: `usr_${acct.slice('acct_'.length)}`, email };
    for (const e of events) {
      expect(e.actor).toEqual(member);
      expect(e.ip).toBe('127.0.0.1');
    }
    const [signedIn, failed, , , created, revoked, keyMade, signedUp] = events;
    expect(signedIn.details).toEqual({ via: 'password' });
    expect(signedUp.details).toEqual({ via: 'signup' });
    expect(failed).toMatchObject({ userAgent: 'audit-test/1.0', details: { email } });
    expect(keyMade).toMatchObject({
      target: { type: 'api_key', id: keyId },
      userAgent: 'audit-test/1.0',
      details: { name: '=HYPERLINK("x")', mode: 'live' },
    });
    expect(revoked.target).toEqual({ type: 'api_key', id: keyId });
    expect(created).toMatchObject({
      target: { type: 'webhook_endpoint', id: whe },
      details: { url: 'http://127.0.0.1:9/hook', mode: 'live' },
    });
    expect(await verifyChain(f.dbh.db, acct)).toEqual({ ok: true, checked: 8 });

    // The studio's page and its CSV, for the owner.
    const page = await s.get('/audit?action=key.created');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Audit log</h1>');
    expect(page.text).toContain(`<tr id="${keyMade.id}">`);
    expect(page.text).not.toContain(`<tr id="${revoked.id}">`);
    const csv = await s.get('/audit.csv');
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      '"id","at","action","actorType","actorId","actorEmail","targetType","targetId","ip",' +
        '"userAgent","details","hash","prevHash"',
    );
    expect(lines).toHaveLength(9);
    const keyLine = lines.find((l) => l.startsWith(`"${keyMade.id}"`))!;
    // the details cell is JSON, quoted, its quotes doubled
    expect(keyLine).toContain('""name"":""=HYPERLINK(\\""x\\"")""');
    // a cell starting with = is written with a quote first: a spreadsheet shows it, never runs it
    const revokedLine = lines.find((l) => l.startsWith(`"${revoked.id}"`))!;
    expect(revokedLine).toContain(`,"127.0.0.1","'=1+2",`);
    const filtered = await s.get(`/audit.csv?action=key.created`);
    expect(filtered.text.split('\r\n')).toHaveLength(3);
  });

  it('records the operator and keys: credits, keys, webhooks of the API, paged and filtered', async () => {
    const { accountId, key, keyId } = await f.api.account(500);
    const hook = await f.api.call('POST', '/v1/webhook-endpoints', {
      key,
      body: { url: 'http://127.0.0.1:9/api-hook' },
    });
    expect(hook.status).toBe(201);
    expect((await f.api.call('DELETE', `/admin/v1/keys/${keyId}`, { key: ADMIN })).status).toBe(
      200,
    );
    const events = await allEvents(accountId, '', 2);
    expect(events.map((e) => [e.action, e.actor.type])).toEqual([
      ['key.revoked', 'operator'],
      ['webhook_endpoint.created', 'key'],
      ['key.created', 'operator'],
      ['credit.added', 'operator'],
    ]);
    expect(events[1].actor).toEqual({ type: 'key', id: keyId });
    expect(events[3].details).toMatchObject({ amountCents: 500, via: 'operator' });
    expect((await allEvents(accountId, '&action=credit.added')).map((e) => e.action)).toEqual([
      'credit.added',
    ]);
    expect(await allEvents(accountId, `&actor=${keyId}`)).toHaveLength(1);

    const bad = await f.api.call('GET', `/admin/v1/accounts/${accountId}/audit-events?action=x`, {
      key: ADMIN,
    });
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('INVALID_INPUT');
    const none = await f.api.call('GET', `/admin/v1/accounts/acct_${'0'.repeat(32)}/audit-events`, {
      key: ADMIN,
    });
    expect(none.status).toBe(404);
    expect(none.json.code).toBe('ACCOUNT_NOT_FOUND');
    const cursor = await f.api.call(
      'GET',
      `/admin/v1/accounts/${accountId}/audit-events?cursor=nope`,
      { key: ADMIN },
    );
    expect(cursor.status).toBe(400);
    expect(await verifyChain(f.dbh.db, accountId)).toEqual({ ok: true, checked: 4 });
  });

  it('shows the log to owners and admins only', async () => {
    const { accountId } = await f.api.account(0);
    const log = new AuditLog(f.dbh.db);
    const q = { limit: 10, cursor: null };
    for (const role of ['owner', 'admin'] as const)
      await expect(log.list(memberPrincipal(accountId, 'p', role), q)).resolves.toBeTruthy();
    for (const role of ['developer', 'billing', 'viewer'] as const)
      await expect(log.list(memberPrincipal(accountId, 'p', role), q)).rejects.toMatchObject({
        code: 'FORBIDDEN',
      });
  });
});
