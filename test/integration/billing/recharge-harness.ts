// What the auto-recharge tests share: an account with an owner and a balance, a card saved
// through the stand-in's setup page (as a person would: the hosted page posts, Stripe's event
// saves it), its plan, renders that spend, and runners of the test's own (as a worker makes them).
import Stripe from 'stripe';
import pino from 'pino';
import type { Harness } from './stripe-harness.ts';
import { newAccount } from './stripe-harness.ts';
import { waitFor } from '../../helpers/wait.ts';
import { AutoRecharge } from '../../../src/services/auto-recharge.ts';
import { RechargeRunner } from '../../../src/services/auto-recharge-run.ts';
import { memberPrincipal } from '../../../src/domain/principal.ts';

export function stripeOf(h: Harness) {
  const u = new URL(h.fake.base);
  return new Stripe(h.fake.secretKey, {
    host: u.hostname,
    port: Number(u.port),
    protocol: 'http',
    telemetry: false,
    maxNetworkRetries: 0,
  });
}

export function autoRechargeOf(h: Harness, perDay: number) {
  return new AutoRecharge({
    db: h.dbh.db,
    stripe: stripeOf(h),
    sessions: h.sessions,
    offered: [1000, 2000, 5000],
    perDay,
    publicUrl: h.svc.base,
  });
}

/** A runner like a worker's, its poll slow: the tests call it. */
export function runnerOf(h: Harness, perDay: number) {
  return new RechargeRunner({
    db: h.dbh.db,
    databaseUrl: h.dbh.url,
    stripe: stripeOf(h),
    perDay,
    timeZone: 'UTC',
    mailer: null,
    log: pino({ level: process.env.RG_DEBUG ? 'debug' : 'silent' }),
    pollMs: 3_600_000,
  });
}

/** A new account with `balance` cents, its owner as a principal, and an API key. */
export async function payer(h: Harness, balance: number) {
  const accountId = await newAccount(h);
  if (balance > 0)
    await h.api.admin('POST', `/accounts/${accountId}/credits`, { amountCents: balance });
  const { rows } = await h.dbh.db.query<{ person_id: string }>(
    "SELECT person_id FROM memberships WHERE account_id = $1 AND role = 'owner'",
    [accountId],
  );
  const owner = memberPrincipal(accountId, rows[0].person_id, 'owner');
  const key = (await h.api.admin('POST', `/accounts/${accountId}/keys`, {})).key as string;
  return { accountId, owner, key };
}

/** Save a card: the setup session's page posted with `card`; the PaymentMethod id once saved. */
export async function saveCard(
  h: Harness,
  ar: AutoRecharge,
  p: ReturnType<typeof memberPrincipal>,
  card = 'pm_card_visa',
) {
  const before = (await ar.view(p)).settings?.paymentMethod ?? null;
  const url = await ar.startSetup(p);
  const res = await fetch(url, {
    method: 'POST',
    body: new URLSearchParams({ card }),
    redirect: 'manual',
  });
  if (res.status !== 303) throw new Error(`setup page answered ${res.status}`);
  // Stripe makes a PaymentMethod of its own id from the test card: the one saved is of `card`.
  const saved = await waitFor('the card saved', async () => {
    const pm = (await ar.view(p)).settings?.paymentMethod;
    const made = pm ? h.fake.offSession.paymentMethods.get(pm) : undefined;
    return made?.kind === card && made.id !== before && made.id;
  });
  return saved;
}

const INPUTS = { prompt: 'a lighthouse', image: 'http://127.0.0.1:9/x.png', duration: 10 };

/** `n` renders of 60 cents at once (queued: no worker renders here). */
export async function spend(h: Harness, key: string, n: number, tag: string) {
  const rs = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      h.api.call('POST', '/v1/generations', {
        key,
        body: { modelId: 'rendergate/image-to-video', inputs: INPUTS },
        headers: { 'idempotency-key': `${tag}-${i}` },
      }),
    ),
  );
  for (const r of rs) if (r.status !== 202) throw new Error(`render refused: ${r.text}`);
}

export async function rechargesOf(h: Harness, accountId: string) {
  const { rows } = await h.dbh.db.query(
    'SELECT * FROM auto_recharges WHERE account_id = $1 ORDER BY created_at',
    [accountId],
  );
  return rows;
}
