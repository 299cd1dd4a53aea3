// Signed-in pages answered from the sessions each API process keeps in memory
// (services/session-cache.ts), with two processes on one database: a change answered by a process
// shows on its own next page at once (a removal, a credit, a charge of the account's key), and on
// the other's as soon as the change's notification (a removal) or the entry's second (a balance
// moved elsewhere) has passed. Nothing a removed member's old cookie asks of either is answered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { ADMIN, startTestService, type TestService } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';
import { StudioSession } from './http-session.ts';
import { accountIdOf, PASSWORD, uniqueEmail } from './helpers.ts';

const f = serviceFixture({ role: 'api' });
let other: TestService;

beforeAll(async () => {
  other = await startTestService(f.dbh.url, { role: 'api' });
});
afterAll(async () => {
  await other?.stop();
});

/** The same browser's cookies, sent to the other process. */
function onOther(s: StudioSession): StudioSession {
  const t = new StudioSession(other.base);
  for (const [k, v] of s.cookies) t.cookies.set(k, v);
  return t;
}

const balanceOf = (html: string) => /id="balance">Balance <strong>([^<]+)</.exec(html)?.[1];

describe('sessions kept in memory by two API processes', () => {
  it('a removed member is signed out on both; their old cookie opens nothing', async () => {
    const owner = new StudioSession(f.svc.base);
    await owner.signUp();
    await owner.get('/members');
    const email = uniqueEmail();
    const invited = await owner.post('/members/invite', { email, role: 'developer' });
    const link = /id="invite-link" readonly value="([^"]+)"/.exec(invited.text)![1];
    const dev = new StudioSession(f.svc.base);
    await dev.get(new URL(link).pathname);
    expect((await dev.post(new URL(link).pathname, { password: PASSWORD })).status).toBe(303);
    const devThere = onOther(dev);
    // both processes now keep the session
    for (let i = 0; i < 3; i++) {
      expect((await dev.get('/keys')).status).toBe(200);
      expect((await devThere.get('/keys')).status).toBe(200);
    }
    const { rows } = await f.dbh.db.query<{ id: string }>(
      'SELECT id FROM people WHERE lower(email) = lower($1)',
      [email],
    );
    await owner.get('/members');
    expect((await owner.post(`/members/${rows[0].id}/remove`, {})).status).toBe(303);
    // the process that answered the removal: at once, before any notification could arrive
    expect((await dev.get('/keys')).status).toBe(303);
    // the other: by the removal's notification
    await waitFor('the other process to sign the member out', async () => {
      return (await devThere.get('/keys')).status === 303;
    });
    expect((await devThere.post('/keys', { name: 'late' })).status).not.toBe(201);
  });

  it('the balance: at once where the change was answered, within a second elsewhere', async () => {
    const owner = new StudioSession(f.svc.base);
    const email = await owner.signUp();
    const accountId = await accountIdOf(f.dbh.db, email);
    const there = onOther(owner);
    expect(balanceOf((await owner.get('/keys')).text)).toBe('€0.00');
    expect(balanceOf((await there.get('/keys')).text)).toBe('€0.00');
    // an operator's credit through this process
    const credit = await f.api.call('POST', `/admin/v1/accounts/${accountId}/credits`, {
      key: ADMIN,
      body: { amountCents: 5_000 },
    });
    expect(credit.status).toBe(201);
    expect(balanceOf((await owner.get('/keys')).text)).toBe('€50.00');
    await waitFor('the other process to show the credit', async () => {
      return balanceOf((await there.get('/keys')).text) === '€50.00';
    });
    // a charge of the account's key through the other process
    const key = await f.api.call('POST', `/admin/v1/accounts/${accountId}/keys`, {
      key: ADMIN,
      body: {},
    });
    const created = await fetch(`${other.base}/v1/generations`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key.json.key}`,
        'content-type': 'application/json',
        'idempotency-key': crypto.randomUUID(),
      },
      body: JSON.stringify({
        modelId: 'rendergate/shot-list',
        inputs: { text: 'A gull lands. The tide turns.' },
      }),
    });
    expect(created.status).toBe(202);
    const cost = ((await created.json()) as { costCents: number }).costCents;
    const after = `€${((5_000 - cost) / 100).toFixed(2)}`;
    expect(balanceOf((await there.get('/keys')).text)).toBe(after);
    await waitFor('this process to show the charge', async () => {
      return balanceOf((await owner.get('/keys')).text) === after;
    });
  });
});
