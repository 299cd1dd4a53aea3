// Auto-recharge (docs/billing.md "Auto-recharge"), with the official `stripe` client against the
// stand-in of test/fakes/stripe.ts: a card saved through a setup-mode Checkout Session, one
// off-session PaymentIntent when a charge crosses the threshold, credited once whichever of its
// answer and its event comes first; one in flight and N a day under many concurrent triggers from
// several runners (the service's worker and two of the test's); declines and requires_action
// turn it off, mailed and audited; bad settings refused with nothing written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import { stripeHarness, moneyOf } from './stripe-harness.ts';
import {
  autoRechargeOf,
  payer,
  rechargesOf,
  runnerOf,
  saveCard,
  spend,
} from './recharge-harness.ts';
import { waitFor } from '../../helpers/wait.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';

const mails: { to: string; body: string }[] = [];
const smtp = new SMTPServer({
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
const smtpPort = (smtp.server.address() as { port: number }).port;

const PER_DAY = 2;
const h = stripeHarness({
  RENDERGATE_AUTO_RECHARGE_PER_DAY: String(PER_DAY),
  RENDERGATE_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
});
let worker2: TestService;
beforeAll(async () => {
  // A second worker node on the same database: its runner hears the same notifications.
  worker2 = await startTestService(h.dbh.url, {
    role: 'worker',
    env: {
      RENDERGATE_STRIPE_SECRET_KEY: h.fake.secretKey,
      RENDERGATE_STRIPE_WEBHOOK_SECRET: h.fake.webhookSecret,
      RENDERGATE_STRIPE_API_BASE: h.fake.base,
      RENDERGATE_TOPUP_AMOUNTS: '1000,2000,5000',
      RENDERGATE_WORKER_CONCURRENCY: '0',
      RENDERGATE_AUTO_RECHARGE_PER_DAY: String(PER_DAY),
      RENDERGATE_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    },
  });
});
afterAll(async () => {
  await worker2?.stop();
  await new Promise<void>((r) => smtp.close(() => r()));
});

const q = async (sql: string, params: unknown[]) => (await h.dbh.db.query(sql, params)).rows;

describe('auto-recharge', () => {
  it('saves a card, then recharges once when a charge crosses the threshold', async () => {
    const ar = autoRechargeOf(h, PER_DAY);
    const { accountId, owner, key } = await payer(h, 1000);
    const pm = await saveCard(h, ar, owner);
    const v = await ar.view(owner);
    expect(v.settings).toMatchObject({ cardBrand: 'visa', cardLast4: '4242', enabled: false });
    const [cus] = await q('SELECT customer_id FROM auto_recharge WHERE account_id = $1', [
      accountId,
    ]);
    expect(h.fake.offSession.customers.get(cus.customer_id).metadata).toEqual({
      rendergate_account: accountId,
    });
    await ar.savePlan(owner, { belowCents: 500, amountCents: 2000, enabled: true });
    await spend(h, key, 8, 'a'); // 1000 - 480 = 520: above the threshold, nothing happens
    await spend(h, key, 1, 'b'); // 460: below
    await waitFor(
      'the recharge credited',
      async () => (await moneyOf(h, accountId)).balance === 2460,
    );
    const [r, ...more] = await rechargesOf(h, accountId);
    expect(more).toEqual([]);
    expect(r).toMatchObject({ status: 'succeeded', amount_cents: 2000 });
    const pi = h.fake.offSession.paymentIntents.get(r.payment_intent);
    expect(pi).toMatchObject({
      amount: 2000,
      currency: 'eur',
      customer: cus.customer_id,
      payment_method: pm,
      metadata: { rendergate_account: accountId, rendergate_recharge: r.id },
    });
    const call = h.fake.requests.find((x) => x.path === '/v1/payment_intents')!;
    expect(call.params).toMatchObject({ off_session: 'true', confirm: 'true' });
    // Its event arrives too and changes nothing.
    await waitFor('the succeeded event', async () => {
      const rows = await q(
        `SELECT outcome FROM stripe_events
          WHERE type = 'payment_intent.succeeded' AND session_id = $1`,
        [r.id],
      );
      return rows.length > 0 && rows;
    });
    const credits = await q(
      `SELECT reason FROM ledger_entries
        WHERE account_id = $1 AND kind = 'credit' AND reason LIKE 'Stripe auto%'`,
      [accountId],
    );
    expect(credits).toEqual([{ reason: `Stripe auto-recharge ${r.payment_intent}` }]);
    const m = await moneyOf(h, accountId);
    expect(m.ledger).toBe(m.balance);
    const [receipt] = await q('SELECT number, receipt_url FROM receipts WHERE entry_id = $1', [
      r.credit_entry_id,
    ]);
    expect(receipt.number).toMatch(/^R-\d{4}-\d{6}$/);
    expect(receipt.receipt_url).toMatch(/^https:\/\/pay\.stripe\.com\/receipts\//);
    const audit = await q(
      `SELECT action FROM audit_events
        WHERE account_id = $1 AND action LIKE 'auto_recharge.%' ORDER BY seq`,
      [accountId],
    );
    expect(audit.map((a) => a.action)).toEqual([
      'auto_recharge.changed',
      'auto_recharge.changed',
      'auto_recharge.charged',
    ]);
  });

  it('credits from the event when it comes before the answer, once', async () => {
    const ar = autoRechargeOf(h, PER_DAY);
    const { accountId, owner } = await payer(h, 1000);
    await saveCard(h, ar, owner);
    await ar.savePlan(owner, { belowCents: 900, amountCents: 1000, enabled: true });
    h.fake.offSession.answerDelayMs = 1500; // the event (50 ms) comes well before the answer
    try {
      const runner = runnerOf(h, PER_DAY);
      await h.api.admin('POST', `/accounts/${accountId}/credits`, { amountCents: 1 });
      await q('UPDATE accounts SET recharge_below_cents = NULL WHERE id = $1', [accountId]);
      await q(
        'UPDATE auto_recharge SET below_cents = 1500, amount_cents = 2000 WHERE account_id = $1',
        [accountId],
      );
      await runner.forAccount(accountId);
      await runner.stop();
    } finally {
      h.fake.offSession.answerDelayMs = 0;
    }
    await waitFor('settled', async () => (await moneyOf(h, accountId)).balance === 3001);
    const outcomes = await q(
      `SELECT outcome FROM stripe_events
        WHERE account_id = $1 AND type = 'payment_intent.succeeded'`,
      [accountId],
    );
    expect(outcomes).toEqual([{ outcome: 'credited' }]);
    const [r] = await rechargesOf(h, accountId);
    expect((await rechargesOf(h, accountId)).length).toBe(1);
    // The event carries no charge: Stripe's receipt was read after its credit, and linked.
    const pi = h.fake.offSession.paymentIntents.get(r.payment_intent);
    const [receipt] = await q('SELECT receipt_url FROM receipts WHERE entry_id = $1', [
      r.credit_entry_id,
    ]);
    expect(receipt.receipt_url).toBe(h.fake.offSession.charges.get(pi.latest_charge).receipt_url);
  });

  it('makes one in flight and at most N a day under concurrent triggers of several runners', async () => {
    const ar = autoRechargeOf(h, PER_DAY);
    const { accountId, owner, key } = await payer(h, 2000);
    await saveCard(h, ar, owner);
    await ar.savePlan(owner, { belowCents: 1500, amountCents: 2000, enabled: true });
    h.fake.offSession.answerDelayMs = 300;
    const runners = [runnerOf(h, PER_DAY), runnerOf(h, PER_DAY)];
    try {
      const before = h.fake.offSession.paymentIntents.size;
      // 20 renders at once cross the threshold; 40 triggers of the test's runners meanwhile, and
      // the two nodes' own runners woken by the notification.
      await Promise.all([
        spend(h, key, 20, 'c'),
        ...Array.from({ length: 40 }, (_, i) => runners[i % 2].forAccount(accountId)),
      ]);
      await waitFor('one recharge', async () => (await moneyOf(h, accountId)).balance === 2800);
      expect(h.fake.offSession.paymentIntents.size - before).toBe(1);
      await spend(h, key, 22, 'd'); // 2800 - 1320 = 1480: the second crossing
      await waitFor('two', async () => (await moneyOf(h, accountId)).balance === 3480);
      await spend(h, key, 34, 'e'); // 3480 - 2040 = 1440: a third crossing, past the day's two
      await Promise.all(Array.from({ length: 20 }, (_, i) => runners[i % 2].forAccount(accountId)));
      await Promise.all(runners.map((r) => r.sweep()));
      expect((await moneyOf(h, accountId)).balance).toBe(1440);
      const rows = await rechargesOf(h, accountId);
      expect(rows.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
      expect(h.fake.offSession.paymentIntents.size - before).toBe(2);
    } finally {
      h.fake.offSession.answerDelayMs = 0;
      await Promise.all(runners.map((r) => r.stop()));
    }
  });

  it('retries a lost answer under the same Idempotency-Key and credits once', async () => {
    const ar = autoRechargeOf(h, PER_DAY);
    const { accountId, owner } = await payer(h, 1000);
    await saveCard(h, ar, owner);
    await ar.savePlan(owner, { belowCents: 900, amountCents: 1000, enabled: true });
    await q('UPDATE accounts SET recharge_below_cents = NULL WHERE id = $1', [accountId]);
    await q(
      'UPDATE auto_recharge SET below_cents = 1500, amount_cents = 2000 WHERE account_id = $1',
      [accountId],
    );
    const runner = runnerOf(h, PER_DAY);
    h.fake.offSession.sendEvents = false;
    // Every answer lost (the library's own retries, under the same key, included).
    h.fake.offSession.loseAnswers = 100;
    const before = h.fake.offSession.paymentIntents.size;
    try {
      await runner.forAccount(accountId);
      const [r] = await rechargesOf(h, accountId);
      expect(r.status).toBe('pending'); // made at Stripe, its answer lost
      // The lease of the call runs out (the process "died"): the sweep calls again.
      h.fake.offSession.loseAnswers = 0;
      await q(
        "UPDATE auto_recharges SET attempted_at = now() - interval '2 minutes' WHERE id = $1",
        [r.id],
      );
      await runner.sweep();
    } finally {
      h.fake.offSession.loseAnswers = 0;
      h.fake.offSession.sendEvents = true;
      await runner.stop();
    }
    // This sweep, or a node's own poll that saw the lease run out first, made the call again.
    await waitFor('credited', async () => (await moneyOf(h, accountId)).balance === 3000);
    expect(h.fake.offSession.paymentIntents.size - before).toBe(1);
    expect((await rechargesOf(h, accountId)).map((r) => r.status)).toEqual(['succeeded']);
  });

  for (const [card, words] of [
    ['pm_card_chargeDeclined', 'declined'],
    ['pm_card_authenticationRequired', 'requires_action'],
  ] as const) {
    it(`turns itself off on ${words}, mails the owners and audits it`, async () => {
      const ar = autoRechargeOf(h, PER_DAY);
      const { accountId, owner, key } = await payer(h, 1000);
      await saveCard(h, ar, owner, card);
      await ar.savePlan(owner, { belowCents: 990, amountCents: 1000, enabled: true });
      await spend(h, key, 1, `f-${card}`);
      await waitFor(
        'turned off',
        async () => {
          const v = await ar.view(owner);
          return !v.settings!.enabled && v.settings;
        },
        { timeoutMs: 8000 },
      );
      const v = await ar.view(owner);
      expect(v.settings!.offReason).toContain(words);
      expect((await rechargesOf(h, accountId)).map((r) => r.status)).toEqual(['failed']);
      expect((await moneyOf(h, accountId)).balance).toBe(940);
      const [acct] = await q('SELECT email, recharge_below_cents FROM accounts WHERE id = $1', [
        accountId,
      ]);
      expect(acct.recharge_below_cents).toBeNull();
      await waitFor(
        'the mail',
        () => mails.find((m) => m.to === acct.email && /off/.test(m.body)),
        { timeoutMs: 8000 },
      );
      const audit = await q(
        `SELECT details FROM audit_events
          WHERE account_id = $1 AND action = 'auto_recharge.failed'`,
        [accountId],
      );
      expect(audit.length).toBe(1);
    });
  }

  it('refuses bad settings with a 400 and writes nothing', async () => {
    const ar = autoRechargeOf(h, PER_DAY);
    const { accountId, owner } = await payer(h, 1000);
    const refused = async (f: () => Promise<unknown>, text: RegExp) => {
      const e = await f().then(
        () => null,
        (x: unknown) => x as { status: number; message: string },
      );
      expect(e?.status).toBe(400);
      expect(e?.message).toMatch(text);
    };
    const plan = { belowCents: 500, amountCents: 1000, enabled: true };
    await refused(() => ar.savePlan(owner, plan), /Save a card/);
    await saveCard(h, ar, owner);
    await refused(() => ar.savePlan(owner, { ...plan, amountCents: 1500 }), /amounts offered/);
    await refused(() => ar.savePlan(owner, { ...plan, belowCents: 1000 }), /less than/);
    await refused(
      () => ar.savePlan(owner, { belowCents: 1200, amountCents: 2000, enabled: true }),
      /above your balance/,
    );
    const [row] = await q('SELECT enabled, below_cents FROM auto_recharge WHERE account_id = $1', [
      accountId,
    ]);
    expect(row).toEqual({ enabled: false, below_cents: null });
    // A card removed while a recharge is in flight: refused until its answer is in.
    await ar.savePlan(owner, plan);
    await q('UPDATE accounts SET recharge_below_cents = NULL WHERE id = $1', [accountId]);
    await q(
      'UPDATE auto_recharge SET below_cents = 1500, amount_cents = 2000 WHERE account_id = $1',
      [accountId],
    );
    h.fake.offSession.answerDelayMs = 1000;
    const runner = runnerOf(h, PER_DAY);
    try {
      const running = runner.forAccount(accountId);
      await waitFor('in flight', async () => (await ar.view(owner)).inFlight);
      await refused(() => ar.removeCard(owner), /in progress/);
      await running;
    } finally {
      h.fake.offSession.answerDelayMs = 0;
      await runner.stop();
    }
    await waitFor('settled', async () => !(await ar.view(owner)).inFlight);
    await ar.removeCard(owner);
    expect((await ar.view(owner)).settings).toMatchObject({ paymentMethod: null, enabled: false });
  });
});
