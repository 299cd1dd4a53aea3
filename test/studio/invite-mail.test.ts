// Invites by mail (docs/studio.md "Members"): with RENDERGATE_SMTP_URL set the one-time link is
// mailed (a real SMTP server, smtp-server, as an operator's would be) and following it from the
// mail joins the account; with the mail server down the invite still stands, and the page says the
// mail failed and shows the link instead, which works the same.
import { describe, expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { ADMIN, freePort, startTestService } from '../helpers/service.ts';
import { StudioSession } from './http-session.ts';
import { PASSWORD, uniqueEmail } from './helpers.ts';
import { startMailingService } from './mailbox.ts';
import { waitFor } from '../helpers/wait.ts';

const f = serviceFixture();

/** The mail's text as written: quoted-printable soft breaks and escapes undone. */
const decoded = (raw: string) =>
  raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));

const roleOf = async (account: string, email: string) =>
  (
    await f.dbh.db.query<{ role: string }>(
      `SELECT m.role FROM memberships m JOIN people p ON p.id = m.person_id
        WHERE m.account_id = $1 AND lower(p.email) = lower($2)`,
      [account, email],
    )
  ).rows[0]?.role ?? null;

async function ownerOn(base: string) {
  const owner = new StudioSession(base);
  const email = await owner.signUp();
  const { rows } = await f.dbh.db.query('SELECT id FROM accounts WHERE email = $1', [email]);
  await owner.get('/members');
  return { owner, account: rows[0].id as string };
}

/** A new person following `link`: the join page, then a password; the answer of the post. */
async function follow(base: string, link: string) {
  const path = new URL(link).pathname;
  const person = new StudioSession(base);
  expect((await person.get(path)).status).toBe(200);
  return person.post(path, { password: PASSWORD });
}

describe('invites by mail', () => {
  it('mails the link, shows none on the page, and the link from the mail joins the account', async () => {
    const { svc, mails, stop } = await startMailingService(f.dbh.url);
    try {
      const { owner, account } = await ownerOn(svc.base);
      const invited = uniqueEmail();
      const r = await owner.post('/members/invite', { email: invited, role: 'billing' });
      expect(r.status).toBe(201);
      expect(r.text).toContain(`Invited ${invited} as billing. The link is on its way by mail.`);
      expect(r.text).not.toContain('id="invite-link"');
      await waitFor('the invite mail', () => mails.some((m) => m.to === invited));
      const mail = decoded(mails.find((m) => m.to === invited)!.body);
      expect(mail).toMatch(/^Subject: You are invited to .+ on Rendergate/m);
      expect(mail).toContain('as billing');
      const link = new RegExp(`${svc.base}/join/[A-Za-z0-9_-]{43}`).exec(mail)![0];
      const joined = await follow(svc.base, link);
      expect(joined.status).toBe(303);
      expect(await roleOf(account, invited)).toBe('billing');
      // the link worked once
      expect((await new StudioSession(svc.base).get(new URL(link).pathname)).status).toBe(410);
    } finally {
      await stop();
    }
  });

  it('with the mail server down the invite stands: the page says so and shows the link', async () => {
    const closed = await freePort(); // nothing listens there
    const svc = await startTestService(f.dbh.url, {
      role: 'api',
      env: { RENDERGATE_SMTP_URL: `smtp://127.0.0.1:${closed}` },
    });
    try {
      const { owner, account } = await ownerOn(svc.base);
      const invited = uniqueEmail();
      const r = await owner.post('/members/invite', { email: invited, role: 'developer' });
      expect(r.status).toBe(201);
      expect(r.text).toContain(
        `Invited ${invited} as developer, but the mail could not be sent: ` +
          'send them the link below yourself.',
      );
      expect(r.text).toContain('role="alert"');
      const link = /id="invite-link" readonly value="([^"]+)"/.exec(r.text)![1];
      // the invite is pending on the Members page, recorded in the audit log, and its link joins
      const members = await owner.get('/members');
      expect(members.text).toContain(invited);
      const audit = await f.dbh.db.query(
        "SELECT 1 FROM audit_events WHERE account_id = $1 AND action = 'member.invited'",
        [account],
      );
      expect(audit.rowCount).toBe(1);
      expect((await follow(svc.base, link)).status).toBe(303);
      expect(await roleOf(account, invited)).toBe('developer');
      // the admin API's answer says the same: invited, not mailed, with the link
      const other = uniqueEmail();
      const res = await fetch(`${svc.base}/admin/v1/accounts/${account}/members`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: other, role: 'viewer' }),
      });
      expect(res.status).toBe(201);
      const body = (await res.json()) as { status: string; mailed: boolean; link: string };
      expect(body).toMatchObject({ status: 'invited', mailed: false });
      expect(body.link).toMatch(/\/join\//);
    } finally {
      await svc.stop();
    }
  });
});
