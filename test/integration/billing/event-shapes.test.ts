// Signed events of shapes Stripe never sends (docs/billing.md "Events"): each is answered 400
// INVALID_REQUEST naming what is wrong, and nothing is written; never a 500, which Stripe would
// retry for days. Then fuzzed with fast-check: Stripe's own events with a field replaced by any
// JSON value, or removed, and bodies of any JSON at all, each rightly signed.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { checkInvariants } from '../../helpers/invariants.ts';
import { moneyOf, newAccount, newSession, eventsOf, stripeHarness } from './stripe-harness.ts';

const h = stripeHarness({ RENDERGATE_STRIPE_WEBHOOK_REQUESTS_PER_MINUTE: '0' });

const count = async () =>
  (await h.dbh.db.query('SELECT count(*)::int AS n FROM stripe_events')).rows[0].n as number;

/** A valid event of each kind read, about a session of a fresh account, as objects to bend. */
async function validEvents() {
  const accountId = await newAccount(h);
  const e = eventsOf(h.fake, await newSession(h, accountId, 1000));
  const events = [
    e.completed(),
    e.asyncFailed(),
    e.refunded(300),
    e.dispute('created', 'x', 400, 'needs_response'),
    JSON.stringify(h.fake.event('customer.created', { id: 'cus_1', object: 'customer' })),
  ].map((b) => JSON.parse(b));
  return { accountId, events };
}

describe('a signed event of an odd shape', () => {
  it('is refused with 400 naming the field, and writes nothing', async () => {
    const { accountId, events } = await validEvents();
    const [completed, , refund, dispute] = events;
    const bend = (base: any, path: string[], value: unknown) => {
      const copy = structuredClone(base);
      let node = copy;
      for (const k of path.slice(0, -1)) node = node[k];
      if (value === undefined) delete node[path.at(-1)!];
      else node[path.at(-1)!] = value;
      return JSON.stringify(copy);
    };
    const cases: [string, string][] = [
      ['not json', 'is not JSON'],
      ['[]', 'body must be an object'],
      ['null', 'body must be an object'],
      ['"evt"', 'body must be an object'],
      [bend(completed, ['data'], undefined), 'data must be an object'],
      [bend(completed, ['data', 'object'], null), 'data.object must be an object'],
      [bend(completed, ['data', 'object'], []), 'data.object must be an object'],
      [bend(completed, ['type'], 7), 'type must be'],
      [bend(completed, ['id'], 'evt_\u0000'), 'id must be'],
      [bend(completed, ['livemode'], 'false'), 'livemode must be true or false'],
      [bend(completed, ['data', 'object', 'amount_total'], 1000.5), 'amount_total must be'],
      [bend(completed, ['data', 'object', 'amount_total'], '1000'), 'amount_total must be'],
      [bend(completed, ['data', 'object', 'amount_total'], -1000), 'amount_total must be'],
      [bend(completed, ['data', 'object', 'amount_total'], 2 ** 53), 'amount_total must be'],
      [bend(completed, ['data', 'object', 'amount_total'], 1e300), 'amount_total must be'],
      [bend(completed, ['data', 'object', 'metadata'], []), 'metadata must be an object'],
      [bend(completed, ['data', 'object', 'client_reference_id'], {}), 'client_reference_id'],
      [bend(completed, ['data', 'object', 'payment_intent'], 5), 'payment_intent must be'],
      [bend(completed, ['data', 'object', 'id'], undefined), 'data.object.id must be'],
      [bend(refund, ['data', 'object', 'amount_refunded'], null), 'amount_refunded must be'],
      [bend(dispute, ['data', 'object', 'amount'], 0.5), 'data.object.amount must be'],
      [bend(dispute, ['data', 'object', 'status'], ['won']), 'data.object.status must be'],
    ];
    const before = { events: await count(), money: await moneyOf(h, accountId) };
    for (const [body, says] of cases) {
      const r = await h.fake.deliver(body);
      expect(r.status, body.slice(0, 200)).toBe(400);
      expect(r.body.code).toBe('INVALID_REQUEST');
      expect(r.body.message).toContain(says);
    }
    expect(await count()).toBe(before.events);
    expect(await moneyOf(h, accountId)).toEqual(before.money);
    // The same events, unbent, are taken.
    expect((await h.fake.deliver(JSON.stringify(completed))).body.outcome).toBe('credited');
  });
});

describe('fuzzed, rightly signed bodies', () => {
  it('are answered 200 or 400, never anything else, and the money stays whole', async () => {
    const { events } = await validEvents();
    const paths = [
      [],
      ['id'],
      ['type'],
      ['livemode'],
      ['data'],
      ['data', 'object'],
      ...[
        'id',
        'mode',
        'payment_status',
        'amount_total',
        'currency',
        'client_reference_id',
        'metadata',
        'payment_intent',
        'created',
        'amount_refunded',
        'amount',
        'status',
      ].map((k) => ['data', 'object', k]),
      ['data', 'object', 'metadata', 'rendergate_checkout'],
      ['data', 'object', 'metadata', 'rendergate_account'],
    ];
    const bent = fc
      .record({
        base: fc.constantFrom(...events),
        path: fc.constantFrom(...paths),
        value: fc.option(fc.jsonValue(), { nil: undefined }),
      })
      .map(({ base, path, value }) => {
        if (path.length === 0) return JSON.stringify(value ?? null);
        const copy = structuredClone(base);
        let node = copy;
        for (const k of path.slice(0, -1)) node = node?.[k];
        if (node && typeof node === 'object') {
          if (value === undefined) delete node[path.at(-1)!];
          else node[path.at(-1)!] = value;
        }
        return JSON.stringify(copy);
      });
    const any = fc.oneof(bent, fc.json(), fc.string());
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(any, async (body) => {
        const r = await h.fake.deliver(body);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        const why = `${r.status} ${JSON.stringify(r.body)} for ${body}`;
        expect([200, 400], why).toContain(r.status);
        if (r.status === 400) expect(r.body.code).toBe('INVALID_REQUEST');
      }),
      { numRuns: 300 },
    );
    // Both kinds of answer were met: the fuzz reached the handlers, not only the shape check.
    expect(statuses.get(200)).toBeGreaterThan(10);
    expect(statuses.get(400)).toBeGreaterThan(10);
    await checkInvariants(h.dbh.db);
  }, 120_000);
});
