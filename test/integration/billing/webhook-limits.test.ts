// What one address can make /webhooks/stripe do (docs/billing.md "The webhook endpoint and Add
// credit, under load"): bodies of at most 64 KiB, and a budget of requests per address taken
// before the signature is checked. A flood from one address gets 429s and costs the server one
// signature check per request of its budget, however long it goes on (counted from the answers: a
// 400 is a check that failed, a 429 one never made), while Stripe's events from another address
// are all applied, and another account's API keeps answering. Requests come from two loopback
// addresses (127.0.0.2, .3).
import { expect, it } from 'vitest';
import { fetchFrom } from '../../helpers/fetch-from.ts';
import { STRIPE_BODY_LIMIT } from '../../../src/http/routes/webhooks-stripe.ts';
import { moneyOf, newAccount, newSession, eventsOf, stripeHarness } from './stripe-harness.ts';

const BUDGET = 10;
const h = stripeHarness({
  RENDERGATE_STRIPE_WEBHOOK_REQUESTS_PER_MINUTE: String(BUDGET),
  // Refusals answered at once: the pace of refusals that keep coming has tests of its own.
  RENDERGATE_REFUSAL_PACE_MS: '0',
});

const post = (from: string, body: string, signature = 't=1,v1=00') =>
  fetchFrom(from, `${h.svc.base}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    body,
  });

it('answers 413 to a body over 64 KiB, and reads one of 64 KiB', async () => {
  const over = await post('127.0.0.4', 'x'.repeat(STRIPE_BODY_LIMIT + 1));
  expect(over.status).toBe(413);
  expect((await over.json()).code).toBe('PAYLOAD_TOO_LARGE');
  // At the limit the body is read and its signature checked (here it is wrong: 400).
  const at = await post('127.0.0.4', 'x'.repeat(STRIPE_BODY_LIMIT));
  expect(at.status).toBe(400);
  expect((await at.json()).code).toBe('INVALID_REQUEST');
});

it('refuses a flood before the signature, and applies another address’s events', async () => {
  const accountId = await newAccount(h);
  const e = eventsOf(h.fake, await newSession(h, accountId, 2000));
  const stripe = [e.completed(), e.refunded(500), e.completed()];
  // 64 KiB bodies from one address, eight at a time, with Stripe's events among them.
  const big = JSON.stringify({ pad: 'x'.repeat(STRIPE_BODY_LIMIT - 20) });
  const flood: number[] = [];
  for (let round = 0; round < 15; round++) {
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => post('127.0.0.2', big).then((r) => r.status)),
    );
    flood.push(...answers);
    if (round < stripe.length) {
      const body = stripe[round];
      const r = await post('127.0.0.3', body, h.fake.sign(body));
      expect(r.status).toBe(200);
    }
  }
  // Its budget's worth were checked (and failed: 400); every other request was refused unchecked.
  expect(flood.filter((s) => s === 400)).toHaveLength(BUDGET);
  expect(flood.filter((s) => s === 429)).toHaveLength(flood.length - BUDGET);
  const refused = await post('127.0.0.2', '{}');
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect((await refused.json()).code).toBe('RATE_LIMITED');
  // Stripe's events, from their own address, were all applied.
  expect(await moneyOf(h, accountId)).toMatchObject({ balance: 1500, shortfall: 0 });
  // And the API does not share the budget: a key from the flooding address is served.
  const { key } = await h.api.account(0);
  const me = await fetchFrom('127.0.0.2', `${h.svc.base}/v1/me`, {
    headers: { authorization: `Bearer ${key}` },
  });
  expect(me.status).toBe(200);
});
