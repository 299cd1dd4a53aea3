// Test renders check input addresses as live ones do (docs/api.md "Test keys"), on a server that
// refuses private addresses, as production runs: for each address the same render is created with a
// live key (made by the worker, whose fetch refuses it) and with a test key (made by the API process,
// which only resolves and checks it), and both end the same way: failed, the charge returned, with the
// same code and message. Nothing is fetched for either. Upload addresses of the account are read from
// storage in both modes, although the service's own address is on loopback.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { serviceFixture } from '../../helpers/fixture.ts';
import { checkInvariants } from '../../helpers/invariants.ts';

const f = serviceFixture({
  env: { RENDERGATE_ALLOW_PRIVATE_URLS: '0', RENDERGATE_WORKER_CONCURRENCY: '2' },
});

const I2V = 'rendergate/image-to-video';
const SE = 'rendergate/start-end-to-video';
const create = (key: string, modelId: string, inputs: Record<string, unknown>) =>
  f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId, inputs },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });

/** An account with credit, its live key and a test key. */
async function account() {
  const a = await f.api.account(100_000);
  const t = await f.api.admin('POST', `/accounts/${a.accountId}/keys`, { mode: 'test' });
  return { ...a, test: t.key as string };
}

/** What a final render says of how it ended: status, money and error. */
const outcome = (g: any) => ({
  status: g.status,
  returned: g.refundedCents === g.costCents,
  error: g.error,
});

/** The same create with the live key and the test key, each followed to its end. */
async function both(a: Awaited<ReturnType<typeof account>>, modelId: string, inputs: object) {
  const made = await Promise.all([a.key, a.test].map((k) => create(k, modelId, { ...inputs })));
  expect(made.map((r) => r.status)).toEqual([202, 202]);
  expect(made.map((r) => r.json.mode ?? 'live')).toEqual(['live', 'test']);
  const [live, test] = await Promise.all([
    f.api.waitFinal(a.key, made[0].json.id),
    f.api.waitFinal(a.test, made[1].json.id),
  ]);
  return { live, test };
}

describe('a test render refuses exactly the input addresses a live render refuses', () => {
  // A private address named literally is refused at create, the same 400 for both keys (nothing is
  // charged); a host name is resolved and checked by the render, in both modes.
  const literal: [string, string][] = [
    ['loopback', 'http://127.0.0.1:9/a.png'],
    ['private (10/8)', 'http://10.1.2.3/a.png'],
    ['private (192.168/16)', 'http://192.168.0.10/a.png'],
    ['link-local (cloud metadata)', 'http://169.254.169.254/latest/meta-data/'],
    ['IPv6 loopback', 'http://[::1]:9/a.png'],
    ['IPv4-mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]:9/a.png'],
  ];
  it.each(literal)('%s: the same 400 at create for both keys', async (_, url) => {
    const a = await account();
    const [live, test] = await Promise.all(
      [a.key, a.test].map((k) => create(k, I2V, { prompt: 'a harbour', image: url })),
    );
    expect([live.status, live.json.details[0].field]).toEqual([400, 'inputs.image']);
    expect([test.status, test.json.details]).toEqual([400, live.json.details]);
  });

  const refused: [string, string][] = [
    ['the image server by a host name on loopback', ''],
    ['a host name that resolves to loopback', 'http://localhost:9/a.png'],
  ];
  it.each(refused)('%s: failed, returned, the same code and message', async (_, given) => {
    const url = given || f.img.url('/a.png').replace('127.0.0.1', 'localhost');
    const a = await account();
    const { live, test } = await both(a, I2V, { prompt: 'a harbour', image: url });
    expect(outcome(test)).toEqual(outcome(live));
    expect(outcome(live)).toEqual({
      status: 'failed',
      returned: true,
      error: { code: 'INPUT_URL_REFUSED', message: expect.stringContaining('which renders may') },
    });
    expect(f.img.hits['/a.png'] ?? 0).toBe(0); // neither fetched it
  });

  it('of two images, the refused one, whichever it is; the other is not fetched by the test render', async () => {
    const a = await account();
    const inputs = {
      prompt: 'day to dusk',
      // a global address: allowed, so the live render starts to fetch it (the refusal of the other
      // image, found before any connection is made, ends that fetch)
      image: 'http://8.8.8.8:9/start.png',
      last_image: 'http://localhost:9/end.png',
      duration: 1,
      resolution: '540p',
      bgm: false,
    };
    const { live, test } = await both(a, SE, inputs);
    expect(outcome(test)).toEqual(outcome(live));
    expect(live.error.message).toBe(
      'http://localhost:9/end.png resolves to a loopback address, which renders may not fetch.',
    );
  });

  it('a bad scheme or credentials: the same 400 for both keys, nothing created', async () => {
    const a = await account();
    for (const image of ['ftp://example.com/a.png', 'file:///etc/passwd', 'http://u:p@x.test/a']) {
      const [live, test] = await Promise.all(
        [a.key, a.test].map((k) => create(k, I2V, { prompt: 'p', image })),
      );
      expect(live.status).toBe(400);
      expect([test.status, test.json.code, test.json.details]).toEqual([
        400,
        'INVALID_INPUT',
        live.json.details,
      ]);
    }
    const { rows } = await f.dbh.db.query(
      'SELECT count(*)::int AS n FROM generations WHERE account_id = $1',
      [a.accountId],
    );
    expect(rows[0].n).toBe(0);
  });

  it('uploads of the account are read from storage in both modes: both succeed', async () => {
    const a = await account();
    const png = await sharp({
      create: { width: 160, height: 90, channels: 3, background: '#336699' },
    })
      .png()
      .toBuffer();
    const up = async (key: string) =>
      (
        await fetch(`${f.svc.base}/v1/uploads`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' },
          body: new Uint8Array(png),
        })
      ).json();
    const [first, last] = [await up(a.key), await up(a.key)];
    expect(first.url.startsWith('http://127.0.0.1:')).toBe(true); // the service's own, on loopback
    const inputs = {
      prompt: 'p',
      image: first.url,
      last_image: last.url,
      duration: 1,
      resolution: '540p',
      bgm: false,
    };
    const { live, test } = await both(a, SE, inputs);
    expect([live.status, test.status]).toEqual(['succeeded', 'succeeded']);
  });

  it('what only a fetch finds is not reproduced: a host that does not resolve is not refused', async () => {
    const a = await account();
    const r = await create(a.test, I2V, {
      prompt: 'p',
      image: 'http://no-such-host.invalid/a.png',
    });
    const g = await f.api.waitFinal(a.test, r.json.id);
    expect(g.status).toBe('succeeded');
    await checkInvariants(f.dbh.db);
  });
});
