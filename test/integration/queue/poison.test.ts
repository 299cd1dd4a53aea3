// Issue 11, defect 3: a render that blocks its worker's event loop. The built-in renderers can no longer
// do that (CPU work is on worker threads), but a backend can: here a test backend that busy-waits on
// the main thread. The fair outcome, as the worker implements it:
// - renders running beside it are not failed: their heartbeats resume when the loop does, and each
//   attempt is fenced by its own token, so at worst one is re-run, never charged twice or lost;
// - the stalled worker claims nothing more until its loop has run freely for a while (/readyz reports
//   the stall, and /metrics counts the claim rounds skipped);
// - the blocking render itself is bounded: it fails after its model's attempts and is refunded, as the
//   contract has every failed render refunded. It costs its owner nothing, but it cannot run for ever
//   nor take other accounts' renders with it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { RenderError, type ModelBackend } from '../../../src/backends/types.ts';
import { serviceFixture } from '../../helpers/fixture.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { waitFor } from '../../helpers/wait.ts';

const BLOCK_MS = 4_000; // past the stall threshold (2 s), short of the lease (15 s)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-poison-'));
fs.writeFileSync(
  path.join(dir, 'catalog.yaml'),
  `
models:
  - id: test/blocker
    name: Blocker
    kind: text
    description: Blocks its worker's event loop, then fails.
    output: { type: text }
    fields:
      - { name: text, type: text, required: true, maxLength: 100 }
    price: "3"
    backend: { driver: local, renderer: blocker }
    openai: { input: text }
    timeLimitSeconds: 30
    maxAttempts: 2
  - id: rendergate/shot-list
    name: Shot list
    kind: text
    description: The built-in text model.
    output: { type: text }
    fields:
      - { name: text, type: text, required: true, maxLength: 20000 }
    price: "1"
    backend: { driver: local, renderer: shot-list }
    openai: { input: text }
    timeLimitSeconds: 30
    maxAttempts: 3
`,
);

// Each block waits for the test's go. The API shares this process's event loop: a request waiting for
// a pool connection when the loop is taken finds its 1.5 s wait expired when the loop frees (timers
// run before the I/O that arrived meanwhile) and answers 503, retryable. That is the stall's cost to
// requests under way (CI saw it once); what this test checks is the renders, so each create is
// answered before the loop is taken.
const gate = () => {
  let open = () => {};
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
};
const gates = [gate(), gate()];
let blocks = 0;
const blocker: ModelBackend = {
  run: async () => {
    await gates[Math.min(blocks, 1)].promise;
    await new Promise((r) => setTimeout(r, 50)); // a moment into the render, then the main thread is taken
    blocks++;
    for (const until = performance.now() + BLOCK_MS; performance.now() < until;) {
      /* computing on the event loop */
    }
    throw new RenderError('BACKEND_BUSY', 'The model did not answer.', true);
  },
};

const f = serviceFixture({
  env: { RENDERGATE_CATALOG: path.join(dir, 'catalog.yaml') },
  extraBackends: { blocker },
});

const create = (key: string, modelId: string, text: string) =>
  f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId, inputs: { text } },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
const metric = async (name: string) =>
  Number(
    (await f.api.call('GET', '/metrics')).text
      .split('\n')
      .find((l) => l.startsWith(`${name} `))
      ?.split(' ')[1],
  );

it('a render that blocks its worker fails after its attempts; renders beside it succeed; the worker pauses claiming', async () => {
  const abuser = await f.api.account(100);
  const other = await f.api.account(100);
  const poison = await create(abuser.key, 'test/blocker', 'block');
  const beside = await create(
    other.key,
    'rendergate/shot-list',
    'A boat leaves the harbour. The sea is calm. Gulls follow it.',
  );
  expect([poison.status, beside.status]).toEqual([202, 202]);
  gates[0].open();

  // The render beside the blocker is not failed by the stall.
  expect((await f.api.waitFinal(other.key, beside.json.id)).status).toBe('succeeded');

  // Once the loop has been blocked, the worker reports it and skips claim rounds until it recovers.
  // The probe runs on the event loop the blocker takes, so it sees `blocks` > 0 only once a block is over.
  await waitFor('a block', () => blocks > 0);
  const ready = await f.api.call('GET', '/readyz');
  expect([ready.status, ready.json.details[0].eventLoop]).toEqual([
    503,
    expect.stringMatching(/^stalled \d+ ms/),
  ]);
  const during = await create(
    other.key,
    'rendergate/shot-list',
    'Created while the worker recovers.',
  );
  expect(during.status).toBe(202);
  gates[1].open();
  expect(await metric('rendergate_event_loop_stalled')).toBe(1);

  // The blocker: both attempts spent, failed and refunded; the render created meanwhile still runs.
  const g = await f.api.waitFinal(abuser.key, poison.json.id);
  expect([g.status, g.error.code, g.refundedCents]).toEqual(['failed', 'BACKEND_BUSY', 3]);
  expect(blocks).toBe(2);
  expect((await f.api.waitFinal(other.key, during.json.id)).status).toBe('succeeded');
  expect(await metric('rendergate_claims_skipped_stalled_total')).toBeGreaterThan(0);
  await waitFor('ready again', async () => (await f.api.call('GET', '/readyz')).status === 200, {
    intervalMs: 200,
  });
  await checkInvariants(f.dbh.db);
});
