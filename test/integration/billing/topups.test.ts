// Top-ups through Stripe Checkout (docs/billing.md), with the official `stripe` library pointed at the
// stand-in of Stripe's API in test/fakes/stripe.ts, and events signed by the library's own helper.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { freshDatabase } from '../../helpers/db.ts';
import {
  ADMIN,
  client,
  freePort,
  startTestService,
  type TestService,
} from '../../helpers/service.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { stripeFake, type StripeFake } from '../../fakes/stripe.ts';
import { StudioSession } from '../../studio/http-session.ts';
import { waitFor } from '../../helpers/wait.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let fake: StripeFake;
let svc: TestService;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  dbh = await freshDatabase();
  fake = await stripeFake();
  svc = await startTestService(dbh.url, {
    env: {
      RENDERGATE_STRIPE_SECRET_KEY: fake.secretKey,
      RENDERGATE_STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
      RENDERGATE_STRIPE_API_BASE: fake.base,
      RENDERGATE_TOPUP_AMOUNTS: '1000,2000,5000',
      // Renders are charged and stay queued: the balance is spent without rendering anything.
      RENDERGATE_WORKER_CONCURRENCY: '0',
    },
  });
  fake.webhookUrl = `${svc.base}/webhooks/stripe`;
  api = client(svc.base);
});
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
  await dbh?.drop();
});

const q = async (sql: string, values: unknown[] = []) => (await dbh.db.query(sql, values)).rows;
/** The account's audit events, oldest first: action, the actor's type, details. */
const audit = async (id: string) =>
  (await q(
    `SELECT action, actor ->> 'type' AS actor, details FROM audit_events
     WHERE account_id = $1 ORDER BY seq`,
    [id],
  )) as Array<{ action: string; actor: string; details: Record<string, unknown> }>;
const balanceOf = async (id: string) =>
  (await q('SELECT balance_cents, shortfall_cents FROM accounts WHERE id = $1', [id]))[0];

/** A signed-in account owner; `accountId` read back by email. */
async function owner() {
  const s = new StudioSession(svc.base);
  const email = await s.signUp();
  const [{ id }] = await q('SELECT id FROM accounts WHERE lower(email) = lower($1)', [email]);
  return { s, accountId: id as string };
}

/** Add credit → the Checkout Session's id (the fake holds the session). */
async function startTopUp(s: StudioSession, amount: number): Promise<string> {
  await s.get('/credit');
  const r = await s.post('/credit', { amount: String(amount) });
  expect(r.status, r.text.slice(0, 300)).toBe(303);
  return /\/c\/pay\/(cs_test_[0-9a-f]+)$/.exec(r.location!)![1];
}

const completed = (sessionId: string) =>
  JSON.stringify(fake.event('checkout.session.completed', fake.pay(sessionId)));

describe('Add credit', () => {
  it('creates a Checkout Session with the right fields and redirects (303) to its url', async () => {
    const { s, accountId } = await owner();
    const home = await s.get('/');
    expect(home.text).toContain('Add credit');
    expect(home.headers.get('content-security-policy')).toContain("form-action 'self';");
    const page = await s.get('/credit');
    // Only the Add credit page may post (and be redirected) to Checkout's origin, and only that origin.
    expect(page.headers.get('content-security-policy')).toContain(
      `form-action 'self' ${fake.base};`,
    );
    expect(page.text).toContain('€20.00');
    const before = fake.requests.length;
    const r = await s.post('/credit', { amount: '2000' });
    expect(r.status).toBe(303);
    expect(fake.requests.length).toBe(before + 1);
    const { method, path, params } = fake.requests.at(-1)!;
    expect({ method, path }).toEqual({ method: 'POST', path: '/v1/checkout/sessions' });
    expect(params).toMatchObject({
      mode: 'payment',
      client_reference_id: accountId,
      metadata: { rendergate_account: accountId },
      line_items: [{ quantity: '1', price_data: { currency: 'eur', unit_amount: '2000' } }],
      success_url: `${svc.base}/credit/success?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${svc.base}/credit?cancelled=1`,
    });
    expect(params.line_items).toHaveLength(1);
    const session = [...fake.sessions.values()].at(-1);
    expect(r.location).toBe(session.url);
    expect(session.amount_total).toBe(2000);
    // Nothing is written until Stripe says it was paid.
    expect(await q('SELECT * FROM topups WHERE account_id = $1', [accountId])).toEqual([]);
    expect((await balanceOf(accountId)).balance_cents).toBe(0);
  });

  it('refuses an amount not offered before Stripe is called', async () => {
    const { s, accountId } = await owner();
    await s.get('/credit');
    const before = fake.requests.length;
    for (const amount of ['1234', '-1000', 'ten', '']) {
      const r = await s.post('/credit', { amount });
      expect(r.status).toBe(400);
      expect(r.text).toContain('Choose one of the amounts');
    }
    expect(fake.requests.length).toBe(before);
    expect(await q('SELECT * FROM ledger_entries WHERE account_id = $1', [accountId])).toEqual([]);
  });
});

describe('POST /webhooks/stripe', () => {
  it('credits a completed session once however many times it arrives, 20 at once included', async () => {
    const { s, accountId } = await owner();
    const id = await startTopUp(s, 5000);
    const payload = completed(id);
    const answers = await Promise.all(Array.from({ length: 20 }, () => fake.deliver(payload)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    // Stripe may also send it again later, and as a new event of the same session.
    expect((await fake.deliver(payload)).body.outcome).toBe('duplicate');
    expect((await fake.deliver(completed(id))).body.outcome).toBe('duplicate');
    expect(answers.filter((a) => a.body.outcome === 'credited')).toHaveLength(1);
    expect((await balanceOf(accountId)).balance_cents).toBe(5000);
    const ledger = await q(
      'SELECT kind, amount_cents, reason FROM ledger_entries WHERE account_id = $1',
      [accountId],
    );
    expect(ledger).toEqual([
      { kind: 'credit', amount_cents: 5000, reason: `Stripe Checkout ${id}` },
    ]);
    const outcomes = await q(
      'SELECT outcome, count(*)::int AS n FROM stripe_events WHERE session_id = $1 GROUP BY 1 ORDER BY 1',
      [id],
    );
    expect(outcomes).toEqual([
      { outcome: 'credited', n: 1 },
      { outcome: 'duplicate', n: 21 },
    ]);
    // one credit.added by the system in the audit log (after the sign-up's session.signed_in)
    expect(await audit(accountId)).toEqual([
      { action: 'session.signed_in', actor: 'member', details: { via: 'signup' } },
      {
        action: 'credit.added',
        actor: 'system',
        details: { amountCents: 5000, via: 'stripe_checkout', checkoutSession: id },
      },
    ]);
    await checkInvariants(dbh.db);
  });

  it('refuses a missing, wrong, tampered or stale signature with 400 and writes nothing', async () => {
    const { s, accountId } = await owner();
    const id = await startTopUp(s, 1000);
    const payload = completed(id);
    const events = (await q('SELECT count(*)::int AS n FROM stripe_events'))[0].n;
    const signing = new Stripe('sk_test_other');
    const otherSecret = signing.webhooks.generateTestHeaderString({
      payload,
      secret: 'whsec_not_the_right_one',
    });
    const tampered = payload.replace('"amount_total":1000', '"amount_total":100000');
    expect(tampered).not.toBe(payload);
    const good = signing.webhooks.generateTestHeaderString({ payload, secret: fake.webhookSecret });
    const stale = signing.webhooks.generateTestHeaderString({
      payload,
      secret: fake.webhookSecret,
      timestamp: Math.floor(Date.now() / 1000) - 301,
    });
    const tries = [
      await fake.deliver(payload, { signature: null }),
      await fake.deliver(payload, { signature: '' }),
      await fake.deliver(payload, { signature: otherSecret }),
      await fake.deliver(tampered, { signature: good }),
      await fake.deliver(payload, { signature: stale }),
      await fake.deliver(payload, { signature: 't=1,v1=deadbeef' }),
    ];
    for (const t of tries) {
      expect(t.status).toBe(400);
      expect(t.body.code).toBe('INVALID_REQUEST');
    }
    expect((await q('SELECT count(*)::int AS n FROM stripe_events'))[0].n).toBe(events);
    expect(await balanceOf(accountId)).toEqual({ balance_cents: 0, shortfall_cents: 0 });
    // The same bytes, rightly signed, are accepted.
    expect((await fake.deliver(payload)).body.outcome).toBe('credited');
  });

  it('credits an asynchronous payment when it succeeds, not when the session completes unpaid', async () => {
    const { s, accountId } = await owner();
    const id = await startTopUp(s, 2000);
    const unpaid = await fake.deliver(
      JSON.stringify(fake.event('checkout.session.completed', fake.pay(id, 'unpaid'))),
    );
    expect(unpaid).toMatchObject({ status: 200, body: { outcome: 'ignored' } });
    expect((await balanceOf(accountId)).balance_cents).toBe(0);
    const ok = await fake.deliver(
      JSON.stringify(fake.event('checkout.session.async_payment_succeeded', fake.pay(id))),
    );
    expect(ok).toMatchObject({ status: 200, body: { outcome: 'credited' } });
    expect((await balanceOf(accountId)).balance_cents).toBe(2000);
    await checkInvariants(dbh.db);
  });

  it('answers 200 to other events and to an unknown account, changing nothing, and records them', async () => {
    const other = await fake.deliver(
      JSON.stringify(fake.event('customer.created', { id: 'cus_1', object: 'customer' })),
    );
    expect(other).toMatchObject({ status: 200, body: { outcome: 'ignored' } });
    const { s } = await owner();
    const id = await startTopUp(s, 1000);
    const session = {
      ...fake.pay(id),
      client_reference_id: 'acct_0190f6f1c2a87c3e9a4e5b6d7c8e9f01',
      metadata: { rendergate_account: 'acct_0190f6f1c2a87c3e9a4e5b6d7c8e9f01' },
    };
    const r = await fake.deliver(JSON.stringify(fake.event('checkout.session.completed', session)));
    expect(r).toMatchObject({ status: 200, body: { outcome: 'refused' } });
    const [rec] = await q(
      'SELECT outcome, detail, account_id FROM stripe_events WHERE session_id = $1',
      [id],
    );
    expect(rec).toMatchObject({
      outcome: 'refused',
      account_id: 'acct_0190f6f1c2a87c3e9a4e5b6d7c8e9f01',
    });
    expect(rec.detail).toContain('not credited');
    expect(await q('SELECT * FROM topups WHERE session_id = $1', [id])).toEqual([]);
  });

  it('takes back a refund and a dispute after the credit was spent, leaving a shortfall that blocks renders', async () => {
    const { s, accountId } = await owner();
    const key = (await api.admin('POST', `/accounts/${accountId}/keys`, {})).key;
    const first = await startTopUp(s, 1000);
    await fake.deliver(completed(first));
    // Spend 960 of the 1000 on 16 renders of 60 cents (queued: no worker renders here).
    const inputs = { prompt: 'a lighthouse', image: 'http://127.0.0.1:9/x.png', duration: 10 };
    for (let i = 0; i < 16; i++) {
      const r = await api.call('POST', '/v1/generations', {
        key,
        body: { modelId: 'rendergate/image-to-video', inputs },
        headers: { 'idempotency-key': `spend-${i}` },
      });
      expect(r.status).toBe(202);
    }
    expect((await balanceOf(accountId)).balance_cents).toBe(40);
    const paid = fake.sessions.get(first);
    const refund = JSON.stringify(fake.event('charge.refunded', fake.charge(paid, 1000)));
    expect((await fake.deliver(refund)).body.outcome).toBe('reversed');
    expect((await fake.deliver(refund)).body.outcome).toBe('duplicate');
    expect(await balanceOf(accountId)).toEqual({ balance_cents: 0, shortfall_cents: 960 });
    const [rev] = await q(
      `SELECT amount_cents, reason FROM ledger_entries WHERE account_id = $1 AND kind = 'reversal'`,
      [accountId],
    );
    expect(rev).toEqual({
      amount_cents: 40,
      reason: `Stripe refund of Checkout ${first} (shortfall 960 cents)`,
    });
    // A dispute of money already refunded takes nothing more (news that moves no money).
    expect(
      (
        await fake.deliver(
          JSON.stringify(fake.event('charge.dispute.created', fake.dispute(paid, 1000))),
        )
      ).body.outcome,
    ).toBe('ignored');
    // The shortfall blocks live renders (402) until made good.
    const blocked = await api.call('POST', '/v1/generations', {
      key,
      body: { modelId: 'rendergate/image-to-video', inputs },
      headers: { 'idempotency-key': 'blocked' },
    });
    expect(blocked.status).toBe(402);
    expect(blocked.json.code).toBe('INSUFFICIENT_BALANCE');
    expect(blocked.json.message).toContain('owes 960 cents');

    // A second top-up pays the shortfall first, then is disputed in part.
    const second = await startTopUp(s, 2000);
    await fake.deliver(completed(second));
    expect(await balanceOf(accountId)).toEqual({ balance_cents: 1040, shortfall_cents: 0 });
    const ok = await api.call('POST', '/v1/generations', {
      key,
      body: { modelId: 'rendergate/image-to-video', inputs },
      headers: { 'idempotency-key': 'after' },
    });
    expect(ok.status).toBe(202);
    expect((await balanceOf(accountId)).balance_cents).toBe(980);
    const dispute = JSON.stringify(
      fake.event('charge.dispute.created', fake.dispute(fake.sessions.get(second), 1500)),
    );
    expect((await fake.deliver(dispute)).body.outcome).toBe('reversed');
    expect(await balanceOf(accountId)).toEqual({ balance_cents: 0, shortfall_cents: 520 });
    const kinds = await q(
      `SELECT kind, amount_cents FROM ledger_entries WHERE account_id = $1 AND kind IN ('credit', 'reversal') ORDER BY id`,
      [accountId],
    );
    expect(kinds).toEqual([
      { kind: 'credit', amount_cents: 1000 },
      { kind: 'reversal', amount_cents: 40 },
      { kind: 'credit', amount_cents: 2000 },
      { kind: 'reversal', amount_cents: 960 },
      { kind: 'reversal', amount_cents: 980 },
    ]);
    // The operator's credit makes the rest good.
    await api.admin('POST', `/accounts/${accountId}/credits`, { amountCents: 600 });
    expect(await balanceOf(accountId)).toEqual({ balance_cents: 80, shortfall_cents: 0 });
    // each top-up, reversal and the operator's credit is audited, in order
    expect((await audit(accountId)).map((e) => `${e.action} ${e.actor}`)).toEqual([
      'session.signed_in member',
      'key.created operator',
      'credit.added system',
      'credit.reversed system',
      'credit.added system',
      'credit.reversed system',
      'credit.added operator',
    ]);
    expect((await audit(accountId))[3].details).toMatchObject({
      amountCents: 1000,
      takenCents: 40,
      shortfallCents: 960,
      checkoutSession: first,
    });
    await checkInvariants(dbh.db);
  });
});

describe('the success page and the console', () => {
  it('shows the new balance once the event arrived, waiting for it', async () => {
    const { s, accountId } = await owner();
    const id = await startTopUp(s, 1000);
    const page = s.get(`/credit/success?session_id=${id}`);
    // The page is held on the change notification until the credit commits.
    await waitFor('the request held', async () =>
      (await fetch(`${svc.base}/metrics`).then((r) => r.text())).includes(
        'rendergate_held_requests 1',
      ),
    );
    await fake.deliver(completed(id));
    const r = await page;
    expect(r.status).toBe(200);
    expect(r.text).toContain('€10.00 was added');
    expect(r.text).toMatch(/balance is now <strong>€10\.00<\/strong>/);
    expect((await balanceOf(accountId)).balance_cents).toBe(1000);
  });

  it('shows top-ups, reversals, shortfalls and Stripe events with their outcomes to the operator', async () => {
    // An account that spent 60 of a top-up then refunded at Stripe owes 60.
    const { s, accountId } = await owner();
    const key = (await api.admin('POST', `/accounts/${accountId}/keys`, {})).key;
    const id = await startTopUp(s, 1000);
    const payload = completed(id);
    await fake.deliver(payload);
    await fake.deliver(payload);
    await fake.deliver(
      JSON.stringify(fake.event('customer.created', { id: 'cus_2', object: 'customer' })),
    );
    const stray = await startTopUp(s, 1000);
    await fake.deliver(
      JSON.stringify(
        fake.event('checkout.session.completed', {
          ...fake.pay(stray),
          client_reference_id: 'acct_nobody',
        }),
      ),
    );
    expect(
      (
        await api.call('POST', '/v1/generations', {
          key,
          headers: { 'idempotency-key': 'one' },
          body: {
            modelId: 'rendergate/image-to-video',
            inputs: { prompt: 'a', image: 'http://127.0.0.1:9/x.png', duration: 10 },
          },
        })
      ).status,
    ).toBe(202);
    await fake.deliver(
      JSON.stringify(fake.event('charge.refunded', fake.charge(fake.sessions.get(id), 1000))),
    );
    expect(await balanceOf(accountId)).toEqual({ balance_cents: 0, shortfall_cents: 60 });
    const op = new StudioSession(svc.base);
    await op.get('/admin');
    expect((await op.post('/admin/signin', { token: ADMIN })).status).toBe(303);
    const list = await op.get('/admin');
    expect(list.text).toContain('Shortfalls owed');
    const owing = { id: accountId };
    expect(list.text).toContain(owing.id);
    const events = await op.get('/admin/stripe');
    expect(events.status).toBe(200);
    for (const o of ['credited', 'duplicate', 'ignored', 'refused', 'reversed'])
      expect(events.text).toContain(`<td><strong>${o}</strong>`);
    expect(events.text).toContain('not credited');
    const account = await op.get(`/admin/accounts/${owing.id}`);
    expect(account.text).toContain('top-up');
    expect(account.text).toContain('reversal');
    expect(account.text).toContain('Shortfall');
  });
});

describe('without Stripe, or with Stripe away', () => {
  it('offers no Add credit and answers 404 at /webhooks/stripe without the two variables', async () => {
    const plain = await startTestService(dbh.url);
    try {
      const s = new StudioSession(plain.base);
      await s.signUp();
      expect((await s.get('/')).text).not.toContain('Add credit');
      expect((await s.get('/credit')).status).toBe(404);
      const r = await fake.deliver('{}', { url: `${plain.base}/webhooks/stripe` });
      expect(r.status).toBe(404);
    } finally {
      await plain.stop();
    }
  });

  it('says so clearly when Stripe cannot be reached, and writes nothing', async () => {
    const away = await startTestService(dbh.url, {
      env: {
        RENDERGATE_STRIPE_SECRET_KEY: fake.secretKey,
        RENDERGATE_STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
        RENDERGATE_STRIPE_API_BASE: `http://127.0.0.1:${await freePort()}`,
      },
    });
    try {
      const s = new StudioSession(away.base);
      const email = await s.signUp();
      await s.get('/credit');
      const r = await s.post('/credit', { amount: '1000' });
      expect(r.status).toBe(503);
      expect(r.text).toContain('Stripe could not be reached');
      expect(r.text).toContain('Nothing was charged');
      const rows = await q(
        `SELECT (SELECT count(*)::int FROM ledger_entries l WHERE l.account_id = a.id) AS entries,
        (SELECT count(*)::int FROM topups t WHERE t.account_id = a.id) AS topups FROM accounts a WHERE lower(a.email) = lower($1)`,
        [email],
      );
      expect(rows).toEqual([{ entries: 0, topups: 0 }]);
    } finally {
      await away.stop();
    }
  });
});
