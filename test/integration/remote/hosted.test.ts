// Replicate and fal, the hosted APIs, through the whole API against fakes of their protocols
// (test/fakes/replicate.ts, test/fakes/fal.ts), each pointed at by the backend's `baseUrl`.
import { expect, it } from 'vitest';
import { falFake, type FalFake } from '../../fakes/fal.ts';
import { replicateFake, type ReplicateFake } from '../../fakes/replicate.ts';
import {
  attempts,
  create,
  download,
  finalOk,
  ledgerFor,
  remoteFixture,
  videoModel,
} from './harness.ts';
import { waitFor } from '../../helpers/wait.ts';

let rep: ReplicateFake;
let fal: FalFake;
const f = remoteFixture({
  before: async () => {
    rep = await replicateFake();
    fal = await falFake();
    process.env.RG_TEST_REPLICATE = rep.token;
    process.env.RG_TEST_FAL = fal.key;
  },
  models: () => [
    videoModel(
      't/rep',
      {
        driver: 'replicate',
        model: 'owner/name',
        apiToken: '${env:RG_TEST_REPLICATE}',
        baseUrl: rep.base,
        inputs: { prompt: 'prompt', num_frames: 'duration * 16' },
      },
      { timeLimitSeconds: 4, maxAttempts: 2 },
    ),
    videoModel(
      't/fal',
      {
        driver: 'fal',
        app: 'fal-ai/wan/v2.2/i2v',
        apiKey: '${env:RG_TEST_FAL}',
        baseUrl: fal.base,
      },
      { timeLimitSeconds: 4, maxAttempts: 2 },
    ),
  ],
  after: async () => {
    await rep.close();
    await fal.close();
    delete process.env.RG_TEST_REPLICATE;
    delete process.env.RG_TEST_FAL;
  },
});

it('Replicate: creates on the model, polls to a terminal status, stores the output byte for byte', async () => {
  const g = await create(f, 't/rep', { prompt: 'waves', duration: 3 });
  await finalOk(f, g.id);
  expect(Buffer.compare(await download(f, g.id), rep.output)).toBe(0);
  expect(rep.created.at(-1)).toMatchObject({
    path: '/v1/models/owner/name/predictions',
    input: { prompt: 'waves', num_frames: 48 },
  });
});

it('Replicate: a throttled create and a failed poll are retried, charged once', async () => {
  rep.script.push({ kind: 'throttled' }, { kind: 'poll-error' });
  const g = await create(f, 't/rep', { prompt: 'busy' });
  await finalOk(f, g.id);
  expect(await ledgerFor(f, g.id)).toEqual(['charge']);
});

it('Replicate: a failed prediction fails at once, refunded', async () => {
  rep.script.push({ kind: 'fail' });
  const g = await create(f, 't/rep', { prompt: 'nope' });
  const done = await f.api.waitFinal(f.key, g.id);
  expect([done.status, done.error.code, done.refundedCents]).toEqual([
    'failed',
    'MODEL_FAILED',
    g.costCents,
  ]);
  expect(await attempts(f, g.id)).toBe(1);
});

it('Replicate: a prediction that never ends is cancelled at the time limit; DELETE cancels too', async () => {
  rep.script.push({ kind: 'hang' }, { kind: 'hang' });
  const g = await create(f, 't/rep', { prompt: 'forever' });
  const done = await f.api.waitFinal(f.key, g.id, 60_000);
  expect([done.status, done.refundedCents]).toEqual(['failed', g.costCents]);
  const ids = rep.created.slice(-2).map((c) => c.id);
  await waitFor('both cancels', () => ids.every((id) => rep.cancels.includes(id)), {
    timeoutMs: 10_000,
  });

  rep.script.push({ kind: 'hang' });
  const n = rep.created.length;
  const h = await create(f, 't/rep', { prompt: 'delete me' });
  await waitFor('the prediction', () => rep.created.length > n, { timeoutMs: 20_000 });
  expect((await f.api.call('DELETE', `/v1/generations/${h.id}`, { key: f.key })).status).toBe(200);
  await waitFor('the cancel', () => rep.cancels.includes(rep.created.at(-1)!.id), {
    timeoutMs: 10_000,
  });
});

it('fal: submits to the app, polls status on the app without its subpath, stores the result byte for byte', async () => {
  fal.script.push({ kind: 'queued', polls: 3 });
  const g = await create(f, 't/fal', { prompt: 'a boat' });
  await finalOk(f, g.id);
  expect(Buffer.compare(await download(f, g.id), fal.output)).toBe(0);
  expect(fal.submitted.at(-1)).toMatchObject({
    path: '/fal-ai/wan/v2.2/i2v',
    input: { prompt: 'a boat', duration: 5 },
  });
  expect(fal.statusPaths.at(-1)).toMatch(/^\/fal-ai\/wan\/requests\/[^/]+\/status$/);
  expect(fal.positions.slice(-3)).toEqual([2, 1, 0]);
});

it('fal: a result refused for its input fails at once; DELETE cancels the request', async () => {
  fal.script.push({ kind: 'fail' });
  const g = await create(f, 't/fal', { prompt: 'flagged' });
  const done = await f.api.waitFinal(f.key, g.id);
  expect([done.status, done.error.code]).toEqual(['failed', 'MODEL_FAILED']);
  expect(await attempts(f, g.id)).toBe(1);

  fal.script.push({ kind: 'hang' });
  const n = fal.submitted.length;
  const h = await create(f, 't/fal', { prompt: 'stop' });
  await waitFor('the request', () => fal.submitted.length > n, { timeoutMs: 20_000 });
  expect((await f.api.call('DELETE', `/v1/generations/${h.id}`, { key: f.key })).status).toBe(200);
  await waitFor('the cancel', () => fal.cancels.includes(fal.submitted.at(-1)!.id), {
    timeoutMs: 10_000,
  });
});

it("Replicate: an output of another type than the model's fails the render", async () => {
  rep.script.push({ kind: 'wrong-type' });
  const g = await create(f, 't/rep', { prompt: 'html' });
  const done = await f.api.waitFinal(f.key, g.id);
  expect([done.status, done.error.code]).toEqual(['failed', 'OUTPUT_WRONG_TYPE']);
});

it('fal: a throttled submit is retried, charged once; a request that never completes is cancelled at the time limit', async () => {
  fal.script.push({ kind: 'throttled' });
  const g = await create(f, 't/fal', { prompt: 'throttled' });
  await finalOk(f, g.id);
  expect(await ledgerFor(f, g.id)).toEqual(['charge']);

  fal.script.push({ kind: 'hang' }, { kind: 'hang' });
  const n = fal.submitted.length;
  const h = await create(f, 't/fal', { prompt: 'forever' });
  const done = await f.api.waitFinal(f.key, h.id, 60_000);
  expect([done.status, done.refundedCents]).toEqual(['failed', h.costCents]);
  const ids = fal.submitted.slice(n).map((s) => s.id);
  expect(ids).toHaveLength(2);
  await waitFor('both cancels', () => ids.every((id) => fal.cancels.includes(id)), {
    timeoutMs: 10_000,
  });
});
