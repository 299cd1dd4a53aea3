// verifyWebhook against deliveries signed by the `standardwebhooks` package (the reference
// implementation of the Standard Webhooks spec the server signs with): a genuine one is accepted; a
// tampered body, a stale or future timestamp, another secret or a missing header are refused.
import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { RendergateError, verifyWebhook } from '../../../packages/client/src/index.ts';

const secret = 'whsec_' + crypto.randomBytes(24).toString('base64');
const body = JSON.stringify({
  type: 'generation.succeeded',
  timestamp: '2026-11-22T10:00:00.000Z',
  data: { id: 'gen_0190f6f1c2a87c3e9a4e5b6d7c8e9f01', status: 'succeeded' },
});

function delivery(at = new Date(), payload = body, key = secret) {
  const id = 'msg_' + crypto.randomUUID();
  const signature = new Webhook(key).sign(id, at, payload);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

async function refused(p: Promise<unknown>) {
  const e = await p.then(
    () => undefined,
    (err) => err,
  );
  expect(e).toBeInstanceOf(RendergateError);
  expect((e as RendergateError).code).toBe('WEBHOOK_INVALID');
}

describe('verifyWebhook', () => {
  it('accepts a genuine delivery, from a string, bytes, or a Headers object, and returns the event', async () => {
    const h = delivery();
    expect((await verifyWebhook(body, h, secret)).type).toBe('generation.succeeded');
    expect(
      (await verifyWebhook(new TextEncoder().encode(body), new Headers(h), secret)).data.id,
    ).toBe('gen_0190f6f1c2a87c3e9a4e5b6d7c8e9f01');
    // Several signatures (a secret being rotated): one match is enough.
    const other = delivery(new Date(), body, 'whsec_' + crypto.randomBytes(24).toString('base64'));
    await verifyWebhook(
      body,
      { ...h, 'webhook-signature': `${other['webhook-signature']} ${h['webhook-signature']}` },
      secret,
    );
    // The standard's own verifier agrees on what we accept.
    expect(new Webhook(secret).verify(body, h)).toBeTruthy();
  });

  it('refuses a tampered body, another secret, a stale or future timestamp, and missing headers', async () => {
    const h = delivery();
    await refused(verifyWebhook(body.replace('succeeded', 'failed'), h, secret));
    await refused(verifyWebhook(body + ' ', h, secret));
    await refused(verifyWebhook(body, h, 'whsec_' + crypto.randomBytes(24).toString('base64')));
    await refused(verifyWebhook(body, { ...h, 'webhook-id': 'msg_other' }, secret));
    await refused(verifyWebhook(body, delivery(new Date(Date.now() - 6 * 60_000)), secret));
    await refused(verifyWebhook(body, delivery(new Date(Date.now() + 6 * 60_000)), secret));
    await refused(verifyWebhook(body, { ...h, 'webhook-signature': 'v1,' }, secret));
    await refused(
      verifyWebhook(
        body,
        { ...h, 'webhook-signature': h['webhook-signature'].replace('v1,', 'v2,') },
        secret,
      ),
    );
    const { 'webhook-signature': _, ...unsigned } = h;
    await refused(verifyWebhook(body, unsigned, secret));
    // An old delivery is accepted only within a tolerance the caller chose.
    const old = delivery(new Date(Date.now() - 6 * 60_000));
    expect((await verifyWebhook(body, old, secret, { toleranceSeconds: 600 })).type).toBe(
      'generation.succeeded',
    );
  });
});
