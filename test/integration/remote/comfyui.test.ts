// The ComfyUI driver through the whole API, against a fake ComfyUI (test/fakes/comfyui.ts): the
// workflow with its bindings set, completion on the websocket and from /history after the socket
// drops, the output node's file from /view, a workflow error, DELETE interrupting the prompt, a file
// of the wrong type.
import { expect, it } from 'vitest';
import { comfyFake, type ComfyFake } from '../../fakes/comfyui.ts';
import {
  attempts,
  claimRoundPassed,
  create,
  download,
  finalOk,
  remoteFixture,
  videoModel,
} from './harness.ts';
import { waitFor } from '../../helpers/wait.ts';

let comfy: ComfyFake;
const WORKFLOW = {
  3: {
    class_type: 'KSampler',
    inputs: { seed: 1, steps: 20, cfg: 7, model: ['4', 0], positive: ['6', 0] },
  },
  4: { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'wan.safetensors' } },
  6: { class_type: 'CLIPTextEncode', inputs: { text: 'placeholder', clip: ['4', 1] } },
  9: { class_type: 'SaveVideo', inputs: { filename_prefix: 'ComfyUI', images: ['3', 0] } },
};
const f = remoteFixture({
  before: async () => {
    comfy = await comfyFake();
  },
  files: () => ({ 'wf.json': WORKFLOW }),
  models: () => [
    videoModel('t/comfy', {
      driver: 'comfyui',
      url: comfy.base,
      workflow: 'wf.json',
      outputNode: '9',
      bindings: {
        '6.inputs.text': 'prompt',
        '3.inputs.seed': 'has(inputs.seed) ? inputs.seed : 0',
        '3.inputs.steps': 'duration * 4',
      },
    }),
    videoModel(
      't/comfy-fast',
      {
        driver: 'comfyui',
        url: comfy.base,
        workflow: 'wf.json',
        bindings: { '6.inputs.text': 'prompt' },
      },
      { timeLimitSeconds: 2, maxAttempts: 1 },
    ),
  ],
  after: async () => {
    await comfy.close();
  },
});

it("queues the bound workflow, follows it on the websocket, stores the output node's file byte for byte", async () => {
  const g = await create(f, 't/comfy', { prompt: 'a lighthouse at dusk', seed: 7, duration: 2 });
  await finalOk(f, g.id);
  expect(Buffer.compare(await download(f, g.id), comfy.output)).toBe(0);
  const p = comfy.prompts.at(-1)!;
  expect(p.graph[6].inputs).toEqual({ text: 'a lighthouse at dusk', clip: ['4', 1] });
  expect(p.graph[3].inputs).toMatchObject({ seed: 7, steps: 8, model: ['4', 0] });
  expect(p.clientId).toBe(`rendergate-${g.id}-1`);
});

it('finds the end in /history when the websocket drops mid-render', async () => {
  comfy.script.push({ kind: 'drop-socket' });
  const g = await create(f, 't/comfy', { prompt: 'dropped' });
  await finalOk(f, g.id);
  expect(Buffer.compare(await download(f, g.id), comfy.output)).toBe(0);
});

it('a workflow error fails at once, refunded', async () => {
  comfy.script.push({ kind: 'error' });
  const g = await create(f, 't/comfy', { prompt: 'broken' });
  const done = await f.api.waitFinal(f.key, g.id);
  expect([done.status, done.error.code, done.refundedCents]).toEqual([
    'failed',
    'MODEL_FAILED',
    g.costCents,
  ]);
  expect(done.error.message).toContain('Expected all tensors');
  expect(await attempts(f, g.id)).toBe(1);
});

it("an output of another type than the model's fails the render", async () => {
  comfy.script.push({ kind: 'png' });
  const g = await create(f, 't/comfy', { prompt: 'png' });
  expect((await f.api.waitFinal(f.key, g.id)).error.code).toBe('OUTPUT_WRONG_TYPE');
});

it('DELETE interrupts the running prompt and removes it from the queue', async () => {
  comfy.script.push({ kind: 'hang' });
  const n = comfy.prompts.length;
  const g = await create(f, 't/comfy', { prompt: 'endless' });
  await waitFor('the prompt', () => comfy.prompts.length > n, { timeoutMs: 20_000 });
  const id = comfy.prompts.at(-1)!.id;
  expect((await f.api.call('DELETE', `/v1/generations/${g.id}`, { key: f.key })).status).toBe(200);
  await waitFor(
    'interrupt and delete',
    () => comfy.interrupts.includes(id) && comfy.deletes.includes(id),
    { timeoutMs: 10_000 },
  );
});

it('a prompt that never ends is interrupted at the time limit, refunded', async () => {
  comfy.script.push({ kind: 'hang' });
  const n = comfy.prompts.length;
  const g = await create(f, 't/comfy-fast', { prompt: 'slow' });
  const done = await f.api.waitFinal(f.key, g.id, 30_000);
  expect([done.status, done.error.code, done.refundedCents]).toEqual([
    'failed',
    'BACKEND_TIMEOUT',
    g.costCents,
  ]);
  const id = comfy.prompts[n].id;
  await waitFor('the interrupt', () => comfy.interrupts.includes(id), { timeoutMs: 10_000 });
});

it('while /system_stats fails the renders wait, spending no attempt, then run once it answers', async () => {
  comfy.healthy = false;
  await waitFor(
    'the server seen down',
    async () =>
      (await (await fetch(`${f.svc.base}/readyz`)).json()).backends?.every((b: any) => !b.healthy),
    { timeoutMs: 10_000 },
  );
  const n = comfy.prompts.length;
  const g = await create(f, 't/comfy', { prompt: 'later' });
  await claimRoundPassed(f.api, f.key);
  expect([await attempts(f, g.id), comfy.prompts.length]).toEqual([0, n]);
  comfy.healthy = true;
  await finalOk(f, g.id);
});
