// The Add credit page's auto-recharge, as a person uses it over HTTP: Save a card (to the
// stand-in's setup page and back), the card shown, the plan refused with a 400 page when bad
// (nothing written) and saved when good, Remove card (detached at Stripe, or later when Stripe
// cannot be reached: the page says which).
import { describe, expect, it } from 'vitest';
import { stripeHarness } from './stripe-harness.ts';
import { StudioSession } from '../../studio/http-session.ts';
import { waitFor } from '../../helpers/wait.ts';

const h = stripeHarness();

describe('the Add credit page', () => {
  it('saves a card, refuses a bad plan, saves a good one and removes the card', async () => {
    const s = new StudioSession(h.svc.base);
    const email = await s.signUp();
    const page = await s.get('/credit');
    expect(page.text).toContain('Save a card');
    const save = await s.post('/credit/card', {});
    expect(save.status).toBe(303);
    expect(save.location!.startsWith(h.fake.base)).toBe(true);
    const stripePage = await fetch(save.location!, {
      method: 'POST',
      body: new URLSearchParams({ card: 'pm_card_visa' }),
      redirect: 'manual',
    });
    expect(stripePage.headers.get('location')).toContain('/credit?card=saving');
    await waitFor('the card shown', async () =>
      (await s.get('/credit')).text.includes('visa ending in 4242'),
    );
    const form = { below: '5', amount: '1000', enabled: 'on' };
    const atZero = await s.post('/credit/auto-recharge', form);
    expect(atZero.status).toBe(400);
    expect(atZero.text).toContain('above your balance');
    const notOffered = await s.post('/credit/auto-recharge', { ...form, amount: '1234' });
    expect(notOffered.status).toBe(400);
    expect(notOffered.text).toContain('amounts offered');
    const junk = await s.post('/credit/auto-recharge', { ...form, below: 'lots' });
    expect(junk.status).toBe(400);
    const { rows } = await h.dbh.db.query(
      `SELECT a.id, r.enabled FROM accounts a JOIN auto_recharge r ON r.account_id = a.id
        WHERE lower(a.email) = lower($1)`,
      [email],
    );
    expect(rows[0].enabled).toBe(false);
    await h.api.admin('POST', `/accounts/${rows[0].id}/credits`, { amountCents: 2500 });
    const ok = await s.post('/credit/auto-recharge', form);
    expect(ok.status).toBe(303);
    const after = await s.get('/credit?saved=1');
    expect(after.text).toContain('Auto-recharge settings saved');
    expect(after.text).toMatch(/name="enabled" checked/);
    expect(after.text).toContain('value="5.00"');
    const [card] = (
      await h.dbh.db.query('SELECT payment_method FROM auto_recharge WHERE account_id = $1', [
        rows[0].id,
      ])
    ).rows;
    const removed = await s.post('/credit/card/remove', {});
    expect(removed.status).toBe(303);
    expect(removed.location).toBe('/credit?card=removed');
    const gone = await s.get(removed.location!);
    expect(gone.text).toContain('Save a card');
    expect(gone.text).toContain('Card removed and detached at Stripe');
    expect(h.fake.offSession.paymentMethods.get(card.payment_method)!.customer).toBeNull();
  });

  it('removes the card while Stripe is unreachable, and says it is detached later', async () => {
    const s = new StudioSession(h.svc.base);
    await s.signUp();
    const save = await s.post('/credit/card', {});
    await fetch(save.location!, {
      method: 'POST',
      body: new URLSearchParams({ card: 'pm_card_visa' }),
      redirect: 'manual',
    });
    await waitFor('the card shown', async () =>
      (await s.get('/credit')).text.includes('visa ending in 4242'),
    );
    h.fake.offSession.failDetach = 2; // the call and the library's retry of a closed connection
    const removed = await s.post('/credit/card/remove', {});
    expect(removed.location).toBe('/credit?card=removed-later');
    const page = await s.get(removed.location!);
    expect(page.text).toContain('Save a card');
    expect(page.text).toContain('it will not be charged');
  });
});
