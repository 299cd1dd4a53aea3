// What the Stripe money tests share: the service on a fresh database with Stripe pointed at the
// stand-in of test/fakes/stripe.ts, accounts made through the admin API, Checkout Sessions made
// through the service's own CheckoutSessions (the real bound and records, the official `stripe`
// client talking to the stand-in), and the events of one payment as Stripe sends them, signed by
// the library's own helper.
import { afterAll, beforeAll } from 'vitest';
import Stripe from 'stripe';
import pino from 'pino';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { stripeFake, type StripeFake } from '../../fakes/stripe.ts';
import { waitFor } from '../../helpers/wait.ts';
import { CheckoutSessions } from '../../../src/services/checkout-sessions.ts';

export interface Harness {
  dbh: Awaited<ReturnType<typeof freshDatabase>>;
  fake: StripeFake;
  svc: TestService;
  api: ReturnType<typeof client>;
  sessions: CheckoutSessions;
}

/** Registers the file's beforeAll/afterAll; the object is filled in before the first test. */
export function stripeHarness(env: Record<string, string> = {}): Harness {
  const h = {} as Harness;
  beforeAll(async () => {
    h.dbh = await freshDatabase();
    h.fake = await stripeFake();
    h.svc = await startTestService(h.dbh.url, {
      env: {
        RENDERGATE_STRIPE_SECRET_KEY: h.fake.secretKey,
        RENDERGATE_STRIPE_WEBHOOK_SECRET: h.fake.webhookSecret,
        RENDERGATE_STRIPE_API_BASE: h.fake.base,
        RENDERGATE_TOPUP_AMOUNTS: '1000,2000,5000',
        // Renders are charged and stay queued: the balance is spent without rendering anything.
        RENDERGATE_WORKER_CONCURRENCY: '0',
        ...env,
      },
    });
    h.fake.webhookUrl = `${h.svc.base}/webhooks/stripe`;
    h.api = client(h.svc.base);
    const u = new URL(h.fake.base);
    const stripe = new Stripe(h.fake.secretKey, {
      host: u.hostname,
      port: Number(u.port),
      protocol: 'http',
      telemetry: false,
    });
    h.sessions = new CheckoutSessions({ db: h.dbh.db, stripe, log: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await h.svc?.stop();
    await h.fake?.close();
    await h.dbh?.drop();
  });
  return h;
}

export async function newAccount(h: Harness): Promise<string> {
  const a = await h.api.admin('POST', '/accounts', {
    email: `s-${Math.random().toString(36).slice(2)}@example.test`,
  });
  return a.id as string;
}

/** A payment session of `amount` for the account, made as Add credit makes it: the fake's. */
export async function newSession(h: Harness, accountId: string, amount = 1000): Promise<any> {
  const s = await h.sessions.create(accountId, 'payment', amount, {
    line_items: [
      {
        quantity: 1,
        price_data: { currency: 'eur', unit_amount: amount, product_data: { name: 'credit' } },
      },
    ],
    success_url: 'http://127.0.0.1/credit/success',
  });
  return h.fake.sessions.get(s.id);
}

/** The account's money as the database holds it, and its ledger's sum. */
export async function moneyOf(h: Harness, accountId: string) {
  const { rows } = await h.dbh.db.query(
    `SELECT a.balance_cents AS balance, a.shortfall_cents AS shortfall,
       coalesce((SELECT sum(CASE WHEN kind IN ('charge', 'reversal') THEN -amount_cents
                                 ELSE amount_cents END)
                 FROM ledger_entries l WHERE l.account_id = a.id), 0)::bigint AS ledger
     FROM accounts a WHERE a.id = $1`,
    [accountId],
  );
  return rows[0] as { balance: number; shortfall: number; ledger: number };
}

/** The signed events of one payment, each a JSON body as Stripe sends it (one event id each). */
export function eventsOf(fake: StripeFake, session: any) {
  const paid = () => ({ ...fake.pay(session.id) });
  const asUnpaid = () => ({ ...paid(), payment_status: 'unpaid' });
  const body = (type: string, object: any) => JSON.stringify(fake.event(type, object));
  return {
    completed: () => body('checkout.session.completed', paid()),
    completedUnpaid: () => body('checkout.session.completed', asUnpaid()),
    asyncSucceeded: () => body('checkout.session.async_payment_succeeded', paid()),
    asyncFailed: () => body('checkout.session.async_payment_failed', asUnpaid()),
    refunded: (cumulative: number) => body('charge.refunded', fake.charge(paid(), cumulative)),
    /** An event of this payment's dispute `name` (the same name, the same dispute). */
    dispute: (type: string, name: string, amount: number, status: string) =>
      body(
        `charge.dispute.${type}`,
        fake.dispute(paid(), amount, { id: `dp_${name}_${session.id.slice(-16)}`, status }),
      ),
  };
}

/**
 * Delivers `body` as Stripe does: again after a 503 (the service's answer when its database
 * connections are all busy, here with dozens of events of one payment waiting for its lock), until
 * another answer comes.
 */
export function deliverUntilTaken(h: Harness, body: string) {
  return waitFor('an answer other than 503', async () => {
    const r = await h.fake.deliver(body);
    return r.status !== 503 && r;
  });
}
