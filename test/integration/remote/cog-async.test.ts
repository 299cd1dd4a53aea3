// Cog live progress (RENDERGATE_WORKER_CALLBACK_URL set): predictions run asynchronously against a fake
// that implements Cog's async HTTP and webhooks (test/fakes/cog-async.ts); the worker's receiver takes
// their tqdm logs as progress. Progress rises during the render as polls and `Prefer: wait` see it;
// webhooks lost are made up for by polling the prediction; forged webhooks are refused; cancel reaches
// the prediction.
import { expect, it } from 'vitest';
import { cogFake, type CogFake } from '../../fakes/cog.ts';
import { freePort } from '../../helpers/service.ts';
import { create, download, finalOk, ledgerFor, remoteFixture, videoModel } from './harness.ts';
import { waitFor } from '../../helpers/wait.ts';

let cog: CogFake;
let port = 0;
const f = remoteFixture({
  before: async () => {
    cog = await cogFake();
    cog.webhookIntervalMs = 20;
    port = await freePort();
  },
  models: () => [
    videoModel('t/cog', { driver: 'cog', url: cog.base }, { timeLimitSeconds: 30, maxAttempts: 2 }),
  ],
  env: {
    get RENDERGATE_WORKER_CALLBACK_URL() {
      return `http://127.0.0.1:${port}/rg`;
    },
    RENDERGATE_COG_POLL_MS: '200',
  },
  after: async () => {
    await cog.close();
  },
});

/** The generation as a poll sees it; with `wait`, as `Prefer: wait=<wait>` answers it. */
async function poll(id: string, wait?: number) {
  const r = await f.api.call('GET', `/v1/generations/${id}`, {
    key: f.key,
    headers: wait ? { prefer: `wait=${wait}` } : {},
  });
  expect(r.status).toBe(200);
  return r.json as { status: string; progress: number | null };
}

/** Releases the fake's predictions to `step` of 10, then polls until the generation shows that progress. */
async function reach(id: string, step: number, wait?: number): Promise<number> {
  cog.gate = step;
  let seen = 0;
  await waitFor(
    `progress ${step / 10}`,
    async () => {
      seen = (await poll(id, wait)).progress ?? 0;
      return seen >= step / 10 - 1e-9;
    },
    { timeoutMs: 20_000 },
  );
  return seen;
}

it('reports progress from the tqdm logs while it renders, seen by polling and by Prefer: wait; the file from the prediction', async () => {
  cog.gate = 0;
  const g = await create(f, 't/cog', { prompt: 'a lighthouse' });
  const seen = [await reach(g.id, 2), await reach(g.id, 5), await reach(g.id, 8, 1)];
  expect(seen).toEqual([0.2, 0.5, 0.8]);
  expect((await poll(g.id)).status).toBe('queued');
  cog.gate = Infinity;
  await finalOk(f, g.id);
  expect((await poll(g.id)).progress).toBe(1);
  expect(Buffer.compare(await download(f, g.id), cog.output)).toBe(0);
  const hooks = () => cog.webhooks.filter((w) => w.id === `${g.id}-1`);
  await waitFor(
    'the completed webhook taken',
    () => hooks().some((w) => w.status === 'succeeded' && w.answer === 200),
    { timeoutMs: 10_000 },
  );
  expect(hooks().some((w) => w.status === 'processing' && w.answer === 200)).toBe(true);
  expect(new URL(hooks()[0].url).pathname).toMatch(/^\/rg\/cog-webhooks\/[A-Za-z0-9_-]{43}$/);
  // Cog forgets a prediction as it sends its completed webhook: a poll landing in between runs it again
  // (and closes that run once the webhook is in); never more than that.
  expect(cog.runs.get(`${g.id}-1`)).toBeLessThanOrEqual(2);
  expect(await ledgerFor(f, g.id)).toEqual(['charge']);
});

it('webhooks lost: progress and the final answer come from polling the prediction', async () => {
  cog.loseWebhooks = true;
  try {
    cog.gate = 0;
    const g = await create(f, 't/cog', { prompt: 'in the fog' });
    expect(await reach(g.id, 3)).toBe(0.3);
    expect(await reach(g.id, 6, 1)).toBe(0.6);
    cog.gate = Infinity;
    await finalOk(f, g.id);
    expect(Buffer.compare(await download(f, g.id), cog.output)).toBe(0);
    expect(cog.webhooks.filter((w) => w.id === `${g.id}-1`).every((w) => w.answer === 0)).toBe(
      true,
    );
    // Cog forgets a final prediction; the poll's synchronous PUT ran it again and answered with it.
    expect(cog.runs.get(`${g.id}-1`)).toBe(2);
    expect(await ledgerFor(f, g.id)).toEqual(['charge']);
  } finally {
    cog.loseWebhooks = false;
  }
});

it('refuses forged webhooks: another address, another prediction, another method, an attempt that ended', async () => {
  cog.gate = 0;
  const g = await create(f, 't/cog', { prompt: 'forged' });
  await waitFor('the start webhook', () => cog.webhooks.some((w) => w.id === `${g.id}-1`), {
    timeoutMs: 10_000,
  });
  const url = cog.webhooks.find((w) => w.id === `${g.id}-1`)!.url;
  const forged = {
    id: `${g.id}-1`,
    status: 'succeeded',
    output: 'data:video/mp4;base64,AAAA',
    logs: '100%|██████████| 10/10',
  };
  const postTo = async (u: string, body: unknown, method = 'POST') =>
    (
      await fetch(u, {
        method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).status;
  expect(await postTo(url.replace(/.{6}$/, 'AAAAAA'), forged)).toBe(404);
  expect(await postTo(`http://127.0.0.1:${port}/rg/cog-webhooks/`, forged)).toBe(404);
  expect(await postTo(url, { ...forged, id: 'gen_other-1' })).toBe(404);
  expect(await postTo(url, forged, 'PUT')).toBe(404);
  expect((await poll(g.id)).status).toBe('queued'); // nothing forged was taken
  cog.gate = Infinity;
  await finalOk(f, g.id);
  expect(Buffer.compare(await download(f, g.id), cog.output)).toBe(0);
  // The attempt is over: its own address is retired.
  expect(await postTo(url, forged)).toBe(404);
});

it('cancel reaches a running async prediction, which ends canceled; the render is refunded', async () => {
  cog.gate = 0;
  const g = await create(f, 't/cog', { prompt: 'cancel me' });
  await reach(g.id, 1);
  const r = await f.api.call('POST', `/v1/generations/${g.id}/cancel`, { key: f.key });
  expect(r.json.status).toBe('refunded');
  await waitFor('the cancel', () => cog.cancels.includes(`${g.id}-1`), { timeoutMs: 10_000 });
  await waitFor(
    'the canceled webhook',
    () => cog.webhooks.some((w) => w.id === `${g.id}-1` && w.status === 'canceled'),
    { timeoutMs: 10_000 },
  );
  expect(await ledgerFor(f, g.id)).toEqual(['charge', 'refund']);
  cog.gate = Infinity;
});
