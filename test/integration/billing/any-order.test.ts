// Stripe's money events in any order (docs/billing.md "Money rules"): Stripe does not promise
// order and delivers an event again until it is answered 2xx. For each scenario of one payment
// (its checkout, refunds, disputes opened, won or lost, an asynchronous payment succeeding or
// failing), every ordering of its events is delivered, each event twice at once, to its own
// account; a render is bought midway wherever the balance allows, so reversals also meet a spent
// balance (a shortfall). After each ordering: the ledger adds up to the balance, the balance is
// not negative, and balance − shortfall is what Stripe's objects say the account was paid (paid −
// refunded − disputed and not won) less what it spent. Then every event is delivered once more,
// all at once, and nothing moves.
import { describe, expect, it } from 'vitest';
import pLimit from 'p-limit';
import { checkInvariants } from '../../helpers/invariants.ts';
import { moneyOf, newAccount, newSession, eventsOf, stripeHarness } from './stripe-harness.ts';

// Thousands of deliveries from one address: its per-address budget has a test of its own.
const h = stripeHarness({ RENDERGATE_STRIPE_WEBHOOK_REQUESTS_PER_MINUTE: '0' });

type Events = ReturnType<typeof eventsOf>;
interface Scenario {
  name: string;
  /** The events of the payment (one body each, made once: a redelivery is the same event). */
  events: (e: Events) => string[];
  /** What Stripe's objects say the account keeps of the 1000 paid. */
  net: number;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'a partial refund, then a dispute won',
    events: (e) => [
      e.completed(),
      e.refunded(400),
      e.dispute('created', 'a', 600, 'needs_response'),
      e.dispute('funds_reinstated', 'a', 600, 'won'),
    ],
    net: 600,
  },
  {
    name: 'a dispute won, said twice (closed as won, funds reinstated)',
    events: (e) => [
      e.completed(),
      e.dispute('created', 'a', 1000, 'needs_response'),
      e.dispute('closed', 'a', 1000, 'won'),
      e.dispute('funds_reinstated', 'a', 1000, 'won'),
    ],
    net: 1000,
  },
  {
    name: 'two disputes: one lost, one won (whose creation never comes)',
    events: (e) => [
      e.completed(),
      e.dispute('closed', 'b', 400, 'won'),
      e.dispute('created', 'c', 600, 'needs_response'),
      e.dispute('closed', 'c', 600, 'lost'),
    ],
    net: 400,
  },
  {
    name: 'a delayed payment that succeeds, refunded twice (cumulative amounts)',
    events: (e) => [e.completedUnpaid(), e.asyncSucceeded(), e.refunded(200), e.refunded(700)],
    net: 300,
  },
  {
    name: 'a delayed payment that fails (and a success event that contradicts it)',
    events: (e) => [e.completedUnpaid(), e.asyncFailed(), e.asyncSucceeded()],
    net: 0,
  },
  {
    name: 'an inquiry that becomes a dispute, and a full refund',
    events: (e) => [
      e.completed(),
      e.dispute('created', 'd', 1000, 'warning_needs_response'),
      e.dispute('funds_withdrawn', 'd', 1000, 'needs_response'),
      e.refunded(1000),
    ],
    net: 0,
  },
];

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) =>
    permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]),
  );
}

const RENDER = {
  modelId: 'rendergate/start-end-to-video',
  inputs: {
    prompt: 'a bridge at dusk',
    image: 'http://127.0.0.1:9/a.png',
    last_image: 'http://127.0.0.1:9/b.png',
    resolution: '1080p',
    duration: 10,
    bgm: true,
  },
};
const RENDER_CENTS = 125;

/** Orderings where the render was bought, and where a reversal then met a spent balance. */
const met = { spent: 0, shortfall: 0 };

/** Delivers each event in `order` twice at once, buys a render midway, and checks the money. */
async function run(scenario: Scenario, order: number[]): Promise<void> {
  const accountId = await newAccount(h);
  const key = (await h.api.admin('POST', `/accounts/${accountId}/keys`, {})).key;
  const session = await newSession(h, accountId, 1000);
  const bodies = scenario.events(eventsOf(h.fake, session));
  let spent = 0;
  const seen: string[] = [];
  for (const [n, i] of order.entries()) {
    const answers = await Promise.all([h.fake.deliver(bodies[i]), h.fake.deliver(bodies[i])]);
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    seen.push(...answers.map((a) => a.body.outcome as string));
    if (n === 1) {
      const r = await h.api.call('POST', '/v1/generations', {
        key,
        body: RENDER,
        headers: { 'idempotency-key': 'midway' },
      });
      expect([202, 402]).toContain(r.status);
      if (r.status === 202) spent = RENDER_CENTS;
    }
  }
  const where = `${scenario.name}, order ${order.join('')}, outcomes ${seen.join(' ')}`;
  const m = await moneyOf(h, accountId);
  if (spent > 0) met.spent++;
  if (m.shortfall > 0) met.shortfall++;
  expect(m.ledger, where).toBe(m.balance);
  expect(m.balance, where).toBeGreaterThanOrEqual(0);
  expect(m.balance - m.shortfall, where).toBe(scenario.net - spent);
  // Every event again, all at once: nothing moves.
  const again = await Promise.all(bodies.map((b) => h.fake.deliver(b)));
  for (const a of again) expect(a.status).toBe(200);
  expect(await moneyOf(h, accountId), where).toEqual(m);
}

describe('every ordering of a payment’s events, each delivered twice at once', () => {
  for (const scenario of SCENARIOS) {
    it(
      scenario.name,
      async () => {
        // Any stand-in of the event makers counts the events.
        const n = scenario.events(new Proxy({} as Events, { get: () => () => '' })).length;
        const orders = permutations([...Array(n).keys()]);
        const limit = pLimit(8);
        await Promise.all(orders.map((order) => limit(() => run(scenario, order))));
        await checkInvariants(h.dbh.db);
      },
      180_000,
    );
  }
});

it('met a spent balance on the way: renders bought, and reversals that left a shortfall', () => {
  expect(met.spent).toBeGreaterThan(0);
  expect(met.shortfall).toBeGreaterThan(0);
});
