// The Checkout Sessions this service creates (docs/billing.md "Money rules"): at most 10 per
// account in any hour, counted in the database so that parallel clicks on two processes cannot
// make an 11th, with a page saying when to try again; a saved card's `setup` session shares the
// bound. And only the sessions recorded here are credited, at the amount they were created with; a
// session made by the previous release (no record, no metadata[rendergate_checkout]) only within a
// day of the upgrade, at an offered amount.
import { describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { startTestService } from '../../helpers/service.ts';
import { StudioSession } from '../../studio/http-session.ts';
import { moneyOf, newAccount, newSession, eventsOf, stripeHarness } from './stripe-harness.ts';

const h = stripeHarness();

const q = async (sql: string, values: unknown[] = []) => (await h.dbh.db.query(sql, values)).rows;
const creates = () =>
  h.fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions').length;

describe('Add credit', () => {
  it('makes at most 10 sessions an hour for an account, across processes', async () => {
    const other = await startTestService(h.dbh.url, {
      env: {
        RENDERGATE_STRIPE_SECRET_KEY: h.fake.secretKey,
        RENDERGATE_STRIPE_WEBHOOK_SECRET: h.fake.webhookSecret,
        RENDERGATE_STRIPE_API_BASE: h.fake.base,
        RENDERGATE_TOPUP_AMOUNTS: '1000,2000,5000',
        RENDERGATE_WORKER_CONCURRENCY: '0',
      },
    });
    try {
      const first = new StudioSession(h.svc.base);
      const email = await first.signUp();
      const [{ id: accountId }] = await q('SELECT id FROM accounts WHERE lower(email) = $1', [
        email.toLowerCase(),
      ]);
      await first.get('/credit');
      // The same person's browser, its requests reaching the other process.
      const second = new StudioSession(other.base);
      second.cookies = new Map(first.cookies);
      second.csrf = first.csrf;
      const before = creates();
      const clicks = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          (i % 2 ? second : first).post('/credit', { amount: '1000' }),
        ),
      );
      const statuses = clicks.map((c) => c.status);
      expect(statuses.filter((s) => s === 303)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(40);
      expect(creates() - before).toBe(10);
      expect(
        await q('SELECT count(*)::int AS n FROM checkout_sessions WHERE account_id = $1', [
          accountId,
        ]),
      ).toEqual([{ n: 10 }]);
      const refused = clicks.find((c) => c.status === 429)!;
      expect(refused.text).toContain('started 10 payments in the last hour');
      expect(refused.text).toMatch(/Try again in \d+ minutes? \(at \d\d:\d\d UTC\)/);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);

      // A saved card's session counts in the same bound, and never reaches Stripe either.
      const setup = h.sessions.create(accountId, 'setup', null, {
        currency: 'eur',
        success_url: `${h.svc.base}/credit`,
      });
      await expect(setup).rejects.toMatchObject({ code: 'RATE_LIMITED', status: 429 });
      expect(creates() - before).toBe(10);

      // Another account keeps its own ten.
      const stranger = new StudioSession(h.svc.base);
      await stranger.signUp();
      await stranger.get('/credit');
      expect((await stranger.post('/credit', { amount: '1000' })).status).toBe(303);
    } finally {
      await other.stop();
    }
  });
});

describe('which sessions are credited', () => {
  /** A session made at Stripe by someone else: not recorded here. */
  async function foreignSession(accountId: string, amount: number, metadata = {}) {
    const u = new URL(h.fake.base);
    const stripe = new Stripe(h.fake.secretKey, {
      host: u.hostname,
      port: Number(u.port),
      protocol: 'http',
    });
    const s = await stripe.checkout.sessions.create({
      mode: 'payment',
      line_items: [
        {
          quantity: 1,
          price_data: { currency: 'eur', unit_amount: amount, product_data: { name: 'x' } },
        },
      ],
      client_reference_id: accountId,
      metadata: { rendergate_account: accountId, ...metadata },
      success_url: 'http://127.0.0.1/',
    });
    return h.fake.sessions.get(s.id);
  }
  const deliver = async (body: string) => {
    const r = await h.fake.deliver(body);
    expect(r.status).toBe(200);
    return r.body.outcome as string;
  };
  const detailOf = async (sessionId: string) =>
    (
      await q('SELECT detail FROM stripe_events WHERE session_id = $1 ORDER BY id DESC', [
        sessionId,
      ])
    )[0].detail as string;

  it('credits our sessions at their amount only, and no session of another', async () => {
    const accountId = await newAccount(h);
    const ours = await newSession(h, accountId, 1000);
    const inflated = JSON.stringify(
      h.fake.event('checkout.session.completed', { ...h.fake.pay(ours.id), amount_total: 5000 }),
    );
    expect(await deliver(inflated)).toBe('refused');
    expect(await detailOf(ours.id)).toContain('amount 5000, created for 1000');
    // An amount never offered, on a session this server never made.
    const odd = await foreignSession(accountId, 777);
    expect(await deliver(eventsOf(h.fake, odd).completed())).toBe('refused');
    // A session claiming to be ours by its metadata, that no row of ours names.
    const claimed = await foreignSession(accountId, 1000, { rendergate_checkout: 'chk_0' });
    expect(await deliver(eventsOf(h.fake, claimed).completed())).toBe('refused');
    expect(await detailOf(claimed.id)).toContain('not a session this server created');
    expect(await moneyOf(h, accountId)).toMatchObject({ balance: 0, shortfall: 0 });
    // Ours, as Stripe reports it, is credited.
    expect(await deliver(eventsOf(h.fake, ours).completed())).toBe('credited');
    expect(await moneyOf(h, accountId)).toMatchObject({ balance: 1000 });
  });

  it('credits a session whose create answer was lost, found by its metadata', async () => {
    const accountId = await newAccount(h);
    const s = await newSession(h, accountId, 2000);
    // As if the process had stopped between Stripe's answer and recording the session's id.
    await q('UPDATE checkout_sessions SET session_id = NULL WHERE session_id = $1', [s.id]);
    const completed = eventsOf(h.fake, s).completed();
    const both = await Promise.all([h.fake.deliver(completed), h.fake.deliver(completed)]);
    expect(both.map((r) => r.body.outcome).sort()).toEqual(['credited', 'duplicate']);
    expect(await moneyOf(h, accountId)).toMatchObject({ balance: 2000 });
    expect(
      await q('SELECT count(*)::int AS n FROM checkout_sessions WHERE session_id = $1', [s.id]),
    ).toEqual([{ n: 1 }]);
  });

  it('credits the previous release’s sessions within a day of the upgrade only', async () => {
    const accountId = await newAccount(h);
    const early = await foreignSession(accountId, 2000);
    expect(await deliver(eventsOf(h.fake, early).completed())).toBe('credited');
    const [{ value }] = await q(
      `SELECT value FROM server_settings WHERE name = 'checkout_sessions_recorded_since'`,
    );
    await q(
      `UPDATE server_settings SET value = $1 WHERE name = 'checkout_sessions_recorded_since'`,
      [String(Number(value) - 2 * 86400)],
    );
    try {
      const late = await foreignSession(accountId, 2000);
      expect(await deliver(eventsOf(h.fake, late).completed())).toBe('refused');
      expect(await detailOf(late.id)).toContain('not a session this server created');
    } finally {
      await q(
        `UPDATE server_settings SET value = $1 WHERE name = 'checkout_sessions_recorded_since'`,
        [value],
      );
    }
    expect(await moneyOf(h, accountId)).toMatchObject({ balance: 2000 });
  });
});
