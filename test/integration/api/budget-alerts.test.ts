// Alerts (docs/billing.md "Alerts"): a low balance and a budget's 80 % and 100 %, each once per
// crossing however many creates race across it, as a webhook event (to endpoints created without
// `events`, not to one that lists only generation events), a mail to the owners and billing members
// (through a real SMTP server, smtp-server, as an operator's would be) and an audit event.
import crypto from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { webhookReceiver } from '../../helpers/webhook-receiver.ts';
import { waitFor } from '../../helpers/wait.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { transaction } from '../../../src/db/pool.ts';
import { reverseIn } from '../../../src/ledger/ledger.ts';

const TEXT = { modelId: 'rendergate/shot-list', inputs: { text: 'A gull lands. The tide turns.' } };

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let api: ReturnType<typeof client>;
let rx: Awaited<ReturnType<typeof webhookReceiver>>;
let smtp: SMTPServer;
const mails: { to: string; body: string }[] = [];

beforeAll(async () => {
  dbh = await freshDatabase();
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, done) {
      let body = '';
      stream.on('data', (d) => (body += d));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo[0]?.address ?? '', body });
        done();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  const port = (smtp.server.address() as { port: number }).port;
  svc = await startTestService(dbh.url, {
    env: { RENDERGATE_SMTP_URL: `smtp://127.0.0.1:${port}` },
  });
  api = client(svc.base);
  rx = await webhookReceiver();
});

afterAll(async () => {
  await svc?.stop();
  await rx?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
  await dbh?.drop();
});

const create = (key: string) =>
  api.call('POST', '/v1/generations', {
    key,
    body: TEXT,
    headers: { 'idempotency-key': crypto.randomUUID() },
  });

async function endpoint(key: string, path: string, events?: string[]) {
  const r = await api.call('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: rx.url(path), ...(events ? { events } : {}) },
  });
  expect(r.status, r.text).toBe(201);
  rx.secret(path, r.json.secret);
}

const audited = async (accountId: string, action: string) =>
  (
    await dbh.db.query<{ details: any }>(
      'SELECT details FROM audit_events WHERE account_id = $1 AND action = $2 ORDER BY seq',
      [accountId, action],
    )
  ).rows.map((r) => r.details);

it('each alert once per crossing under 30 racing creates: webhook, mail and audit', async () => {
  const probe = await api.account(0);
  const c = (await api.call('POST', '/v1/quote', { key: probe.key, body: TEXT })).json.costCents;
  const a = await api.account(c * 10);
  // a billing member, who is mailed
  const person = `usr_${crypto.randomUUID().replaceAll('-', '')}`;
  const email = `billing-${person.slice(-6)}@example.test`;
  await dbh.db.query('INSERT INTO people (id, email) VALUES ($1, $2)', [person, email]);
  await dbh.db.query(
    "INSERT INTO memberships (account_id, person_id, role) VALUES ($1, $2, 'billing')",
    [a.accountId, person],
  );
  await endpoint(a.key, '/all');
  await endpoint(a.key, '/renders', ['generation.succeeded']);
  await api.admin('PATCH', `/accounts/${a.accountId}`, { lowBalanceCents: c * 5 + 1 });
  await api.admin('PUT', `/accounts/${a.accountId}/budgets/day`, { limitCents: c * 5 });

  const rs = await Promise.all(Array.from({ length: 30 }, () => create(a.key)));
  expect(rs.filter((r) => r.status === 202)).toHaveLength(5);

  const events = () =>
    rx.received.filter((r) => r.path === '/all' && !r.body.type.startsWith('gen'));
  await waitFor('three alert events', () => events().length >= 3 && true, { timeoutMs: 20_000 });
  const low = events().filter((e) => e.body.type === 'account.balance_low');
  expect(low.map((e) => [e.verified, e.body.livemode, e.body.data])).toEqual([
    [true, true, { accountId: a.accountId, balanceCents: c * 5, thresholdCents: c * 5 + 1 }],
  ]);
  const budget = events().filter((e) => e.body.type === 'budget.threshold_reached');
  expect(budget.map((e) => e.body.data).sort((x, y) => x.percent - y.percent)).toEqual([
    {
      scope: 'account',
      id: a.accountId,
      period: 'day',
      limitCents: c * 5,
      spentCents: c * 4,
      percent: 80,
    },
    {
      scope: 'account',
      id: a.accountId,
      period: 'day',
      limitCents: c * 5,
      spentCents: c * 5,
      percent: 100,
    },
  ]);
  await waitFor('three mails', () => mails.filter((m) => m.to === email).length >= 3 && true);
  await waitFor('three audit events', async () => {
    const n = (await audited(a.accountId, 'account.balance_low')).length;
    return n + (await audited(a.accountId, 'budget.threshold_reached')).length >= 3;
  });
  expect(
    mails
      .filter((m) => m.to === email)
      .map((m) => /Subject: (.*)/.exec(m.body)![1])
      .sort(),
  ).toEqual(
    [
      'Rendergate: the balance is below its alert',
      'Rendergate: day budget at 100 %',
      'Rendergate: day budget at 80 %',
    ].sort(),
  );
  expect(await audited(a.accountId, 'account.balance_low')).toHaveLength(1);
  expect(await audited(a.accountId, 'budget.threshold_reached')).toHaveLength(2);

  // Once per crossing: the balance rises to the threshold again, then falls below it: one more.
  await api.admin('POST', `/accounts/${a.accountId}/credits`, { amountCents: c * 3 });
  await api.admin('DELETE', `/accounts/${a.accountId}/budgets/day`);
  for (let i = 0; i < 4; i++) expect((await create(a.key)).status).toBe(202);
  await waitFor(
    'a second low-balance event',
    () => events().filter((e) => e.body.type === 'account.balance_low').length === 2,
  );
  // the endpoint that lists generation events only received none of these
  expect(
    rx.received.filter((r) => r.path === '/renders' && !r.body.type.startsWith('gen')),
  ).toEqual([]);
  await waitFor('every render final', async () => {
    const { rows } = await dbh.db.query(
      "SELECT 1 FROM generations WHERE account_id = $1 AND status = 'queued'",
      [a.accountId],
    );
    return rows.length === 0;
  });
  await checkInvariants(dbh.db);
});

it('a reversal taking the balance below the threshold alerts once per crossing', async () => {
  const a = await api.account(1_000);
  await api.admin('PATCH', `/accounts/${a.accountId}`, { lowBalanceCents: 500 });
  const reverse = (cents: number) =>
    transaction(dbh.db, (tx) =>
      reverseIn(tx, { accountId: a.accountId, amountCents: cents, reason: 'Stripe refund re_1' }),
    );
  await reverse(400); // 600: still above
  await reverse(200); // 400: crossed
  await reverse(100); // 300: already below
  const { rows } = await dbh.db.query(
    'SELECT kind, data FROM account_alerts WHERE account_id = $1',
    [a.accountId],
  );
  expect(rows).toEqual([
    {
      kind: 'account.balance_low',
      data: { accountId: a.accountId, balanceCents: 400, thresholdCents: 500 },
    },
  ]);
  await waitFor('its audit event', async () => {
    return (await audited(a.accountId, 'account.balance_low')).length === 1;
  });
});
