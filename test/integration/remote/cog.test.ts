// The Cog driver through the whole API, against a fake Cog container (test/fakes/cog.ts), and its
// failure modes: model failure, busy answers, a hang, a server dying, malformed, oversized and
// wrongly typed answers, DELETE reaching the server, health failing then returning.
import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { cogFake, type CogFake } from '../../fakes/cog.ts';
import {
  attempts,
  create,
  download,
  finalOk,
  claimRoundPassed,
  invariants,
  ledgerFor,
  remoteFixture,
  videoModel,
} from './harness.ts';
import { waitFor } from '../../helpers/wait.ts';

let cog: CogFake;
let big: CogFake;
const f = remoteFixture({
  before: async () => {
    cog = await cogFake();
    big = await cogFake({ output: crypto.randomBytes(200_000) });
  },
  models: () => [
    videoModel(
      't/cog',
      {
        driver: 'cog',
        url: cog.base,
        inputs: {
          prompt: "prompt + ', cinematic'",
          num_frames: 'duration * 8',
          seed: 'has(inputs.seed) ? inputs.seed : 42',
        },
      },
      { timeLimitSeconds: 3, maxAttempts: 2 },
    ),
    videoModel('t/cog-big', { driver: 'cog', url: big.base }),
  ],
  env: { RENDERGATE_BACKEND_OUTPUT_LIMIT_BYTES: '100000' },
  after: async () => {
    await cog.close();
    await big.close();
  },
});

it('renders through Cog: the mapped input, our attempt id as the prediction id, the file byte for byte', async () => {
  const g = await create(f, 't/cog', { prompt: 'a fox', duration: 2 });
  await finalOk(f, g.id);
  expect(Buffer.compare(await download(f, g.id), cog.output)).toBe(0);
  const p = cog.predictions.find((x) => x.id.startsWith(g.id))!;
  expect(p.id).toBe(`${g.id}-1`);
  expect(p.input).toEqual({ prompt: 'a fox, cinematic', num_frames: 16, seed: 42 });
  expect(await ledgerFor(f, g.id)).toEqual(['charge']);
});

it('takes a result given as a URL (a server run with --upload-url)', async () => {
  cog.script.push({ kind: 'url' });
  const g = await create(f, 't/cog', { prompt: 'by url' });
  await finalOk(f, g.id);
  expect(Buffer.compare(await download(f, g.id), cog.output)).toBe(0);
});

it('a model failure fails at once and is refunded, without a retry', async () => {
  cog.script.push({ kind: 'fail', error: 'NSFW content detected' });
  const g = await create(f, 't/cog', { prompt: 'bad' });
  const done = await f.api.waitFinal(f.key, g.id);
  expect([done.status, done.error.code, done.refundedCents]).toEqual([
    'failed',
    'MODEL_FAILED',
    g.costCents,
  ]);
  expect(done.error.message).toContain('NSFW content detected');
  expect(await attempts(f, g.id)).toBe(1);
  expect(cog.predictions.filter((p) => p.id.startsWith(g.id))).toHaveLength(1);
});

it('busy (409 at capacity) and 503 answers are retried, and the render charged once', async () => {
  cog.script.push({ kind: 'busy' }, { kind: 'unavailable' }, { kind: 'ok' });
  const g = await create(f, 't/cog', { prompt: 'busy' });
  await finalOk(f, g.id);
  expect(cog.predictions.filter((p) => p.id.startsWith(g.id)).map((p) => p.outcome)).toEqual([
    'busy',
    'unavailable',
    'ok',
  ]);
  expect(await ledgerFor(f, g.id)).toEqual(['charge']);
  await invariants(f);
});

it('a server that dies mid-render and a malformed answer are retried', async () => {
  cog.script.push({ kind: 'die' }, { kind: 'malformed' }, { kind: 'ok' });
  const g = await create(f, 't/cog', { prompt: 'flaky' });
  await finalOk(f, g.id);
  expect(cog.predictions.filter((p) => p.id.startsWith(g.id)).map((p) => p.outcome)).toEqual([
    'die',
    'malformed',
    'ok',
  ]);
  expect(await ledgerFor(f, g.id)).toEqual(['charge']);
});

it('a server that hangs is stopped at the time limit and told to cancel; attempts run out, then refunded', async () => {
  cog.script.push({ kind: 'hang' }, { kind: 'hang' });
  const g = await create(f, 't/cog', { prompt: 'hang' });
  const done = await f.api.waitFinal(f.key, g.id, 60_000);
  expect([done.status, done.refundedCents]).toEqual(['failed', g.costCents]);
  expect(await attempts(f, g.id)).toBe(2);
  // each attempt's own prediction, and each one told to stop (cancel, or the disconnect Cog treats as one)
  await waitFor(
    'cancels',
    () =>
      [`${g.id}-1`, `${g.id}-2`].every(
        (id) => cog.cancels.includes(id) || cog.disconnected.includes(id),
      ),
    { timeoutMs: 10_000 },
  );
  expect(await ledgerFor(f, g.id)).toEqual(['charge', 'refund']);
});

it('a file of another type than the model promises fails the render, refunded', async () => {
  cog.script.push({ kind: 'wrong-type' });
  const g = await create(f, 't/cog', { prompt: 'html' });
  const done = await f.api.waitFinal(f.key, g.id);
  expect([done.status, done.error.code]).toEqual(['failed', 'OUTPUT_WRONG_TYPE']);
});

it('an oversized result fails the render, refunded', async () => {
  const g = await create(f, 't/cog-big', { prompt: 'huge' });
  const done = await f.api.waitFinal(f.key, g.id);
  expect([done.status, done.error.code, done.refundedCents]).toEqual([
    'failed',
    'OUTPUT_TOO_LARGE',
    g.costCents,
  ]);
});

it('DELETE of a running render reaches the Cog server as a cancel', async () => {
  cog.script.push({ kind: 'hang' });
  const g = await create(f, 't/cog', { prompt: 'stop me' });
  await waitFor('the prediction', () => cog.predictions.some((p) => p.id === `${g.id}-1`), {
    timeoutMs: 20_000,
  });
  expect((await f.api.call('DELETE', `/v1/generations/${g.id}`, { key: f.key })).status).toBe(200);
  await waitFor('the cancel', () => cog.cancels.includes(`${g.id}-1`), { timeoutMs: 10_000 });
  await waitFor('the prediction to end', () => cog.inFlight === 0, { timeoutMs: 10_000 });
  await invariants(f);
});

it('while the server is not ready its renders wait, spending no attempt, and run once it is back', async () => {
  cog.status = 'STARTING';
  await waitFor(
    'the server to be seen down',
    async () =>
      (await (await fetch(`${f.svc.base}/readyz`)).json()).backends?.some(
        (b: any) => b.url === cog.base && !b.healthy,
      ),
    { timeoutMs: 10_000 },
  );
  const before = cog.predictions.length;
  const g = await create(f, 't/cog', { prompt: 'later' });
  await claimRoundPassed(f.api, f.key);
  const { rows } = await f.dbh.db.query(
    'SELECT status, attempts, started_at FROM generations WHERE id = $1',
    [g.id],
  );
  expect(rows[0]).toMatchObject({ status: 'queued', attempts: 0, started_at: null });
  expect(cog.predictions.length).toBe(before);
  const metrics = await (await fetch(`${f.svc.base}/metrics`)).text();
  expect(metrics).toMatch(
    new RegExp(
      `rendergate_backend_up\\{driver="cog",url="${cog.base.replace(/[.]/g, '\\.')}"\\} 0`,
    ),
  );
  cog.status = 'READY';
  await finalOk(f, g.id);
  expect(await attempts(f, g.id)).toBe(1);
});
