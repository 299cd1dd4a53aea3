// Remove card (docs/billing.md "Auto-recharge"): forgotten here and detached from the account's
// Stripe customer, so no later charge can use it (the stand-in refuses a detached card as Stripe
// does). With Stripe unreachable the removal still stands (nothing of ours can charge the card)
// and the worker's runner detaches it later, once, however many runners sweep; a card Stripe
// already detached counts as done; a card replaced by a new one is detached too; many removals at
// once remove and detach once.
import { describe, expect, it } from 'vitest';
import { stripeHarness } from './stripe-harness.ts';
import { autoRechargeOf, payer, runnerOf, saveCard, stripeOf } from './recharge-harness.ts';
import { waitFor } from '../../helpers/wait.ts';

const h = stripeHarness();
const q = async (sql: string, params: unknown[]) => (await h.dbh.db.query(sql, params)).rows;

const detachCalls = (pm: string) =>
  h.fake.requests.filter((r) => r.path === `/v1/payment_methods/${pm}/detach`).length;
const attachedTo = (pm: string) => h.fake.offSession.paymentMethods.get(pm)!.customer;
const detachment = async (pm: string) =>
  (await q('SELECT * FROM card_detachments WHERE payment_method = $1', [pm]))[0];
/** A card's detachment made due now, as if its pause since the last try had passed. */
const makeDue = (pm: string) =>
  q(
    `UPDATE card_detachments SET attempted_at = now() - interval '2 hours'
      WHERE payment_method = $1`,
    [pm],
  );

/** Whether Stripe (the stand-in) would take a payment of `pm` for the account's customer. */
async function chargeable(accountId: string, pm: string): Promise<boolean> {
  const [s] = await q('SELECT customer_id FROM auto_recharge WHERE account_id = $1', [accountId]);
  return stripeOf(h)
    .paymentIntents.create({
      amount: 1000,
      currency: 'eur',
      customer: s.customer_id,
      payment_method: pm,
      off_session: true,
      confirm: true,
    })
    .then(
      () => true,
      (e: { statusCode?: number; message: string }) => {
        expect(e.statusCode).toBe(400);
        return false;
      },
    );
}

describe('Remove card', () => {
  it('forgets the card and detaches it at Stripe: no later charge can use it', async () => {
    const ar = autoRechargeOf(h, 3);
    const { accountId, owner } = await payer(h, 1000);
    const pm = await saveCard(h, ar, owner);
    expect(await chargeable(accountId, pm)).toBe(true);
    expect(await ar.removeCard(owner)).toEqual({ detached: true });
    expect(attachedTo(pm)).toBeNull();
    expect(detachCalls(pm)).toBe(1);
    expect(await chargeable(accountId, pm)).toBe(false);
    expect((await ar.view(owner)).settings).toMatchObject({ paymentMethod: null, enabled: false });
    expect(await detachment(pm)).toMatchObject({ attempts: 1, last_error: null });
    expect((await detachment(pm)).detached_at).not.toBeNull();
    const audit = await q(
      `SELECT details FROM audit_events WHERE account_id = $1 AND action = 'auto_recharge.changed'
        ORDER BY seq`,
      [accountId],
    );
    expect(audit.at(-1)!.details).toMatchObject({ card: null, removed: 'visa 4242' });
  });

  it('removes it while Stripe is unreachable, and the runner detaches it later, once', async () => {
    const ar = autoRechargeOf(h, 3);
    const { accountId, owner } = await payer(h, 1000);
    const pm = await saveCard(h, ar, owner);
    // Unreachable: the call and the library's own retry of a closed connection both fail.
    h.fake.offSession.failDetach = 2;
    expect(await ar.removeCard(owner)).toEqual({ detached: false });
    expect(h.fake.offSession.failDetach).toBe(0);
    // Forgotten at once: nothing of ours can charge it, and it cannot be turned on.
    const s = (await ar.view(owner)).settings!;
    expect(s).toMatchObject({ paymentMethod: null, enabled: false });
    const plan = { belowCents: 500, amountCents: 1000, enabled: true };
    await expect(ar.savePlan(owner, plan)).rejects.toMatchObject({ status: 400 });
    expect(attachedTo(pm)).not.toBeNull();
    const row = await detachment(pm);
    expect(row).toMatchObject({ attempts: 1, detached_at: null, account_id: accountId });
    expect(row.last_error).toMatch(/^Stripe unreachable /);
    // Not due yet: a sweep now leaves it for later.
    const runners = [runnerOf(h, 3), runnerOf(h, 3)];
    try {
      await Promise.all(runners.map((r) => r.sweep()));
      expect(detachCalls(pm)).toBe(2);
      // Its pause over: several sweeps of two runners at once detach it with one call.
      await makeDue(pm);
      await Promise.all(Array.from({ length: 10 }, (_, i) => runners[i % 2].sweep()));
    } finally {
      await Promise.all(runners.map((r) => r.stop()));
    }
    // The service's own worker polls too: one call more in all, whoever made it.
    await waitFor('detached', async () => (await detachment(pm)).detached_at);
    expect(detachCalls(pm)).toBe(3);
    expect(attachedTo(pm)).toBeNull();
    expect(await detachment(pm)).toMatchObject({ attempts: 2, last_error: null });
    expect(await chargeable(accountId, pm)).toBe(false);
  });

  it('removes it when Stripe answers an error, and detaches it once Stripe is well', async () => {
    const ar = autoRechargeOf(h, 3);
    const { owner } = await payer(h, 1000);
    const pm = await saveCard(h, ar, owner);
    h.fake.offSession.failDetach = 1;
    h.fake.offSession.failDetachStatus = 500;
    try {
      expect(await ar.removeCard(owner)).toEqual({ detached: false });
    } finally {
      h.fake.offSession.failDetachStatus = 0;
    }
    expect((await ar.view(owner)).settings).toMatchObject({ paymentMethod: null });
    expect(await detachment(pm)).toMatchObject({ attempts: 1, detached_at: null });
    expect((await detachment(pm)).last_error).toMatch(/^Stripe 500 StripeAPIError/);
    expect(attachedTo(pm)).not.toBeNull();
    await makeDue(pm);
    const runner = runnerOf(h, 3);
    try {
      await runner.sweep();
    } finally {
      await runner.stop();
    }
    await waitFor('detached', async () => (await detachment(pm)).detached_at);
    expect(attachedTo(pm)).toBeNull();
    expect(detachCalls(pm)).toBe(2);
  });

  it('counts a card Stripe already detached as done', async () => {
    const ar = autoRechargeOf(h, 3);
    const { owner } = await payer(h, 1000);
    const pm = await saveCard(h, ar, owner);
    // Detached by an earlier call whose answer was lost: Stripe now answers 400.
    h.fake.offSession.paymentMethods.get(pm)!.customer = null;
    expect(await ar.removeCard(owner)).toEqual({ detached: true });
    const last = h.fake.requests.filter((r) => r.path.endsWith('/detach')).at(-1)!;
    expect(last.path).toBe(`/v1/payment_methods/${pm}/detach`);
    expect((await detachment(pm)).detached_at).not.toBeNull();
  });

  it('removes and detaches once under 20 removals at once', async () => {
    const ar = autoRechargeOf(h, 3);
    const { accountId, owner } = await payer(h, 1000);
    const pm = await saveCard(h, ar, owner);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => ar.removeCard(owner)),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    expect(ok.length).toBe(1);
    for (const r of results)
      if (r.status === 'rejected')
        expect(r.reason).toMatchObject({ status: 400, message: 'No card is saved.' });
    expect(detachCalls(pm)).toBe(1);
    expect(attachedTo(pm)).toBeNull();
    const audit = await q(
      `SELECT 1 FROM audit_events WHERE account_id = $1 AND action = 'auto_recharge.changed'
        AND details->>'removed' IS NOT NULL`,
      [accountId],
    );
    expect(audit.length).toBe(1);
  });

  it('detaches a card replaced by a newly saved one', async () => {
    const ar = autoRechargeOf(h, 3);
    const { accountId, owner } = await payer(h, 1000);
    const first = await saveCard(h, ar, owner);
    const second = await saveCard(h, ar, owner);
    expect(second).not.toBe(first);
    expect((await detachment(first)).account_id).toBe(accountId);
    // The service's worker sweeps every few seconds; a runner of the test's may be first.
    const runner = runnerOf(h, 3);
    try {
      await runner.sweep();
    } finally {
      await runner.stop();
    }
    await waitFor('detached', async () => (await detachment(first)).detached_at);
    expect(attachedTo(first)).toBeNull();
    expect(attachedTo(second)).not.toBeNull();
    expect(await chargeable(accountId, second)).toBe(true);
  });

  it('detaches a card replaced during a recharge only once that recharge is over', async () => {
    const ar = autoRechargeOf(h, 3);
    const { accountId, owner } = await payer(h, 1000);
    const first = await saveCard(h, ar, owner);
    await ar.savePlan(owner, { belowCents: 900, amountCents: 1000, enabled: true });
    // Below its threshold with nothing else woken: the test's runner starts the recharge.
    await q('UPDATE accounts SET recharge_below_cents = NULL WHERE id = $1', [accountId]);
    await q(
      'UPDATE auto_recharge SET below_cents = 1500, amount_cents = 2000 WHERE account_id = $1',
      [accountId],
    );
    // Its answer lost and its event held back: the recharge stays in flight, paying with `first`.
    h.fake.offSession.sendEvents = false;
    h.fake.offSession.loseAnswers = 100;
    const runner = runnerOf(h, 3);
    try {
      await runner.forAccount(accountId);
      expect((await ar.view(owner)).inFlight).toBe(true);
      const second = await saveCard(h, ar, owner);
      expect((await detachment(first)).detached_at).toBeNull();
      await makeDue(first);
      await runner.sweep();
      expect(detachCalls(first)).toBe(0);
      expect((await ar.view(owner)).inFlight).toBe(true);
      // Stripe answers again; the call's lease over, one sweep settles the recharge, then the
      // card's detachment is due and made.
      h.fake.offSession.loseAnswers = 0;
      await q(
        "UPDATE auto_recharges SET attempted_at = now() - interval '2 minutes' WHERE account_id = $1",
        [accountId],
      );
      await runner.sweep();
      await waitFor('detached', async () => (await detachment(first)).detached_at);
      expect(detachCalls(first)).toBe(1);
      expect(attachedTo(first)).toBeNull();
      expect(attachedTo(second)).not.toBeNull();
    } finally {
      h.fake.offSession.loseAnswers = 0;
      h.fake.offSession.sendEvents = true;
      await runner.stop();
    }
    const [r] = await q('SELECT status, payment_method FROM auto_recharges WHERE account_id = $1', [
      accountId,
    ]);
    expect(r).toEqual({ status: 'succeeded', payment_method: first });
  });
});
