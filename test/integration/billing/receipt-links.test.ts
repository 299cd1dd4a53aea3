// Stripe's receipt linked on the receipt of every credit Stripe paid (docs/billing.md
// "Receipts"): a Checkout top-up paid as a person pays it (Add credit, the stand-in's hosted
// page, its event) shows Stripe's `receipt_url` in the Receipts list and in the PDF; when Stripe
// fails the read of the PaymentIntent, the top-up is still credited once and its receipt has no
// link, until an event of the same payment comes again; an auto-recharge credited by its event
// before its answer is linked too.
import { describe, expect, it } from 'vitest';
import {
  deliverUntilTaken,
  eventsOf,
  newAccount,
  newSession,
  stripeHarness,
} from './stripe-harness.ts';
import { StudioSession } from '../../studio/http-session.ts';
import { waitFor } from '../../helpers/wait.ts';

const h = stripeHarness();
const q = async (sql: string, params: unknown[]) => (await h.dbh.db.query(sql, params)).rows;

/** Stripe's receipt page of the charge that paid `paymentIntent`, as the stand-in made it. */
function stripeReceipt(paymentIntent: string): string {
  const pi = h.fake.offSession.paymentIntents.get(paymentIntent);
  return h.fake.offSession.charges.get(pi.latest_charge).receipt_url;
}

const receiptsOf = (accountId: string) =>
  q(
    `SELECT number, receipt_url, reason FROM receipts WHERE account_id = $1 AND series = 'R'
      ORDER BY seq`,
    [accountId],
  );

describe("Stripe's receipt of a Checkout top-up", () => {
  it('is linked in the Receipts list and the PDF', async () => {
    const s = new StudioSession(h.svc.base);
    const email = await s.signUp();
    const [acct] = await q('SELECT id FROM accounts WHERE lower(email) = lower($1)', [email]);
    const start = await s.post('/credit', { amount: '2000' });
    expect(start.status).toBe(303);
    const paid = await fetch(start.location!, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    const [r] = await waitFor('the receipt linked', async () => {
      const rows = await receiptsOf(acct.id);
      return rows[0]?.receipt_url && rows;
    });
    const sessionId = /\/c\/pay\/(cs_test_[0-9a-f]+)$/.exec(start.location!)![1];
    const url = stripeReceipt(h.fake.sessions.get(sessionId).payment_intent);
    expect(url).toMatch(/^https:\/\/pay\.stripe\.com\/receipts\//);
    expect(r).toMatchObject({ receipt_url: url, reason: `Stripe Checkout ${sessionId}` });
    const retrieved = h.fake.requests.filter((x) => x.path.startsWith('/v1/payment_intents/'));
    expect(retrieved.length).toBe(1);
    const usage = await s.get('/usage');
    expect(usage.text).toContain(`<a href="${url}" rel="noopener noreferrer">Stripe's receipt</a>`);
    const pdf = await fetch(`${h.svc.base}/usage/receipts/${r.number}.pdf`, {
      headers: { cookie: s.cookieHeader() },
    });
    expect(pdf.status).toBe(200);
    const text = Buffer.from(await pdf.arrayBuffer()).toString('latin1');
    expect(text).toContain(`/URI (${url})`);
  });

  it('credits once without a link when Stripe fails the read, and links it on a redelivery', async () => {
    const accountId = await newAccount(h);
    const session = await newSession(h, accountId, 1000);
    const ev = eventsOf(h.fake, session);
    h.fake.offSession.failRetrieve = 1;
    const first = await deliverUntilTaken(h, ev.completed());
    expect(first.status).toBe(200);
    expect(h.fake.offSession.failRetrieve).toBe(0); // asked, and Stripe answered 500
    const [r] = await receiptsOf(accountId);
    expect(r.receipt_url).toBeNull();
    const credits = () =>
      q("SELECT 1 FROM ledger_entries WHERE account_id = $1 AND kind = 'credit'", [accountId]);
    expect((await credits()).length).toBe(1);
    // Stripe sends the same payment's event again (or another of it): still one credit, linked.
    expect((await deliverUntilTaken(h, ev.completed())).status).toBe(200);
    expect((await credits()).length).toBe(1);
    const [linked] = await receiptsOf(accountId);
    expect(linked.receipt_url).toBe(stripeReceipt(h.fake.sessions.get(session.id).payment_intent));
    // Linked: a further delivery asks Stripe nothing more.
    const reads = () => h.fake.requests.filter((x) => x.path.startsWith('/v1/payment_intents/'));
    const before = reads().length;
    expect((await deliverUntilTaken(h, ev.asyncSucceeded())).status).toBe(200);
    expect(reads().length).toBe(before);
  });

  it('is never asked for before the credit, and never for a payment not credited', async () => {
    const accountId = await newAccount(h);
    const session = await newSession(h, accountId, 1000);
    const ev = eventsOf(h.fake, session);
    const reads = () => h.fake.requests.filter((x) => x.path.startsWith('/v1/payment_intents/'));
    const before = reads().length;
    // Not paid yet: nothing credited, nothing read.
    expect((await deliverUntilTaken(h, ev.completedUnpaid())).status).toBe(200);
    expect(reads().length).toBe(before);
    expect(await receiptsOf(accountId)).toEqual([]);
  });
});
