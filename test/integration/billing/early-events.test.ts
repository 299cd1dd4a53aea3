// Stripe events that come early or late (docs/billing.md "Money rules"), one case at a time with
// the ledger entries they leave: a refund before its credit is kept and applied with it; a won
// dispute gives back what it took, once, paying a shortfall first; a won that comes before its
// dispute credits nothing; a failed delayed payment is never credited.
import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../helpers/invariants.ts';
import {
  deliverUntilTaken,
  eventsOf,
  moneyOf,
  newAccount,
  newSession,
  stripeHarness,
} from './stripe-harness.ts';

const h = stripeHarness();

const outcome = async (body: string) => {
  const r = await h.fake.deliver(body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.outcome as string;
};
const entries = async (accountId: string) =>
  (
    await h.dbh.db.query(
      `SELECT kind, amount_cents AS cents, reason FROM ledger_entries WHERE account_id = $1
       ORDER BY id`,
      [accountId],
    )
  ).rows;

describe('events before the credit', () => {
  it('keeps a refund that comes first, taking it back in the credit’s transaction', async () => {
    const accountId = await newAccount(h);
    const s = await newSession(h, accountId, 2000);
    const e = eventsOf(h.fake, s);
    expect(await outcome(e.refunded(500))).toBe('kept');
    expect(await moneyOf(h, accountId)).toMatchObject({ balance: 0, shortfall: 0 });
    expect(await outcome(e.completed())).toBe('credited');
    expect(await entries(accountId)).toEqual([
      { kind: 'credit', cents: 2000, reason: `Stripe Checkout ${s.id}` },
      {
        kind: 'reversal',
        cents: 500,
        reason: `Stripe refund or dispute of Checkout ${s.id}, received before its credit`,
      },
    ]);
    expect(await moneyOf(h, accountId)).toMatchObject({ balance: 1500, shortfall: 0 });
    // The larger refund that follows takes only the difference; the first again takes nothing.
    expect(await outcome(e.refunded(2000))).toBe('reversed');
    expect(await outcome(e.refunded(500))).toBe('duplicate');
    expect(await moneyOf(h, accountId)).toMatchObject({ balance: 0, shortfall: 0 });
    await checkInvariants(h.dbh.db);
  });

  it('never credits a delayed payment that failed, whichever event comes first', async () => {
    const failedFirst = await newAccount(h);
    const a = eventsOf(h.fake, await newSession(h, failedFirst));
    expect(await outcome(a.asyncFailed())).toBe('kept');
    expect(await outcome(a.asyncSucceeded())).toBe('refused');
    expect(await moneyOf(h, failedFirst)).toMatchObject({ balance: 0, shortfall: 0 });

    const failedLast = await newAccount(h);
    const b = eventsOf(h.fake, await newSession(h, failedLast));
    expect(await outcome(b.asyncSucceeded())).toBe('credited');
    expect(await outcome(b.asyncFailed())).toBe('reversed');
    expect(await outcome(b.asyncFailed())).toBe('duplicate');
    expect(await moneyOf(h, failedLast)).toMatchObject({ balance: 0, shortfall: 0 });
    await checkInvariants(h.dbh.db);
  });
});

describe('disputes', () => {
  it('gives a won dispute back once, paying the shortfall first', async () => {
    const accountId = await newAccount(h);
    const key = (await h.api.admin('POST', `/accounts/${accountId}/keys`, {})).key;
    const s = await newSession(h, accountId, 1000);
    const e = eventsOf(h.fake, s);
    const dp = `dp_won_${s.id.slice(-16)}`;
    expect(await outcome(e.completed())).toBe('credited');
    // Spend 600 of it (queued renders: no worker here).
    const inputs = { prompt: 'a harbour', image: 'http://127.0.0.1:9/x.png', duration: 10 };
    for (let i = 0; i < 10; i++) {
      const r = await h.api.call('POST', '/v1/generations', {
        key,
        body: { modelId: 'rendergate/image-to-video', inputs },
        headers: { 'idempotency-key': `spend-${i}` },
      });
      expect(r.status).toBe(202);
    }
    expect(await outcome(e.dispute('created', 'won', 1000, 'needs_response'))).toBe('reversed');
    expect(await moneyOf(h, accountId)).toMatchObject({ balance: 0, shortfall: 600 });
    expect(await outcome(e.dispute('funds_reinstated', 'won', 1000, 'won'))).toBe('reinstated');
    expect(await outcome(e.dispute('closed', 'won', 1000, 'won'))).toBe('duplicate');
    expect(await moneyOf(h, accountId)).toMatchObject({ balance: 400, shortfall: 0 });
    const money = (await entries(accountId)).filter((x) => x.kind !== 'charge');
    expect(money).toEqual([
      { kind: 'credit', cents: 1000, reason: `Stripe Checkout ${s.id}` },
      {
        kind: 'reversal',
        cents: 400,
        reason: `Stripe dispute ${dp} of Checkout ${s.id} (shortfall 600 cents)`,
      },
      { kind: 'credit', cents: 1000, reason: `Stripe dispute won ${dp}` },
      { kind: 'reversal', cents: 600, reason: expect.stringMatching(/^Shortfall made good/) },
    ]);
    await checkInvariants(h.dbh.db);
  });

  it('credits nothing for a win that comes before its dispute, or for an inquiry', async () => {
    const accountId = await newAccount(h);
    const e = eventsOf(h.fake, await newSession(h, accountId, 1000));
    expect(await outcome(e.completed())).toBe('credited');
    // Outcomes: `ignored` for news that moves no money, `duplicate` for what was known before.
    expect(await outcome(e.dispute('closed', 'early', 700, 'won'))).toBe('ignored');
    expect(await outcome(e.dispute('created', 'early', 700, 'needs_response'))).toBe('duplicate');
    expect(await outcome(e.dispute('created', 'ask', 1000, 'warning_needs_response'))).toBe(
      'ignored',
    );
    expect(await outcome(e.dispute('closed', 'ask', 1000, 'warning_closed'))).toBe('duplicate');
    expect(await moneyOf(h, accountId)).toMatchObject({ balance: 1000, shortfall: 0 });
    expect(await entries(accountId)).toHaveLength(1);
  });
});

describe('many at once', () => {
  it('takes back once for 50 concurrent refunds and disputes, and gives back once', async () => {
    const accountId = await newAccount(h);
    const s = await newSession(h, accountId, 1000);
    const e = eventsOf(h.fake, s);
    // Half of them before the credit, half after: the credit lands among them.
    const refund = e.refunded(400);
    const dispute = e.dispute('created', 'many', 600, 'needs_response');
    const won = e.dispute('funds_reinstated', 'many', 600, 'won');
    const bodies = [
      ...Array.from({ length: 25 }, (_, i) => (i % 2 ? refund : dispute)),
      e.completed(),
      ...Array.from({ length: 25 }, (_, i) => (i % 2 ? dispute : refund)),
    ];
    const answers = await Promise.all(bodies.map((b) => deliverUntilTaken(h, b)));
    expect(answers.map((a) => a.status)).toEqual(Array(51).fill(200));
    expect(await moneyOf(h, accountId)).toMatchObject({ balance: 0, shortfall: 0 });
    const wins = await Promise.all(Array.from({ length: 20 }, () => deliverUntilTaken(h, won)));
    expect(wins.filter((a) => a.body.outcome === 'reinstated')).toHaveLength(1);
    expect(await moneyOf(h, accountId)).toMatchObject({ balance: 600, shortfall: 0 });
    const sum = (kind: string) =>
      rows.filter((x) => x.kind === kind).reduce((n, x) => n + Number(x.cents), 0);
    const rows = await entries(accountId);
    expect({ credit: sum('credit'), reversal: sum('reversal') }).toEqual({
      credit: 1600,
      reversal: 1000,
    });
    expect(rows.filter((x) => x.reason === `Stripe Checkout ${s.id}`)).toHaveLength(1);
    expect(rows.filter((x) => String(x.reason).startsWith('Stripe dispute won'))).toHaveLength(1);
    await checkInvariants(h.dbh.db);
  });
});
