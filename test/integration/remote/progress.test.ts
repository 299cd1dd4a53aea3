// Progress reported by the backends themselves, at the driver (the worker stores what it is given):
// ComfyUI's `progress` events, Replicate's and fal's tqdm lines in their logs, tokens streamed by a
// chat server against `max_tokens`. Each sequence rises and stays below 1 (1 is the worker's, on success).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../../src/config.ts';
import { createBackends, type Backends } from '../../../src/backends/registry.ts';
import { loadCatalog } from '../../../src/backends/catalog.ts';
import { Metrics } from '../../../src/metrics/metrics.ts';
import { comfyFake, type ComfyFake } from '../../fakes/comfyui.ts';
import { replicateFake, type ReplicateFake } from '../../fakes/replicate.ts';
import { falFake, type FalFake } from '../../fakes/fal.ts';
import { chatFake, type ChatFake } from '../../fakes/openai.ts';
import { textModel, videoModel } from './harness.ts';
import { tqdmProgress } from '../../../src/backends/shared/output.ts';

let comfy: ComfyFake;
let rep: ReplicateFake;
let fal: FalFake;
let chat: ChatFake;
let backends: Backends;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-progress-'));

beforeAll(async () => {
  [comfy, rep, fal, chat] = await Promise.all([
    comfyFake({ steps: 5 }),
    replicateFake(),
    falFake(),
    chatFake(),
  ]);
  fs.writeFileSync(
    path.join(dir, 'wf.json'),
    JSON.stringify({
      3: { class_type: 'KSampler', inputs: {} },
      9: { class_type: 'SaveVideo', inputs: {} },
    }),
  );
  fs.writeFileSync(
    path.join(dir, 'catalog.yaml'),
    stringify({
      models: [
        videoModel('t/comfy', {
          driver: 'comfyui',
          url: comfy.base,
          workflow: 'wf.json',
          bindings: {},
        }),
        videoModel('t/rep', {
          driver: 'replicate',
          model: 'o/n',
          apiToken: rep.token,
          baseUrl: rep.base,
        }),
        videoModel('t/fal', { driver: 'fal', app: 'fal-ai/x', apiKey: fal.key, baseUrl: fal.base }),
        textModel('t/chat', {
          driver: 'openai',
          url: chat.base,
          model: 'm',
          apiKey: chat.apiKey,
          messages: [{ role: 'user', content: 'text' }],
          params: { max_tokens: '10' },
        }),
      ],
    }),
  );
  const catalog = loadCatalog(path.join(dir, 'catalog.yaml'));
  backends = createBackends(loadConfig({ RENDERGATE_DATA_DIR: dir }), catalog, new Metrics());
});
afterAll(async () => {
  await Promise.all([comfy, rep, fal, chat].map((x) => x?.close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

async function progressOf(
  modelId: string,
  inputs: Record<string, string | number>,
): Promise<number[]> {
  const seen: number[] = [];
  const workDir = fs.mkdtempSync(path.join(dir, 'w-'));
  const backend = backends.backendFor({ id: modelId } as never);
  await backend.run(inputs, {
    signal: new AbortController().signal,
    progress: (p) => seen.push(p),
    workDir,
    timeLimitSeconds: 30,
    attemptId: `${modelId}-1`,
    readUpload: () => Promise.resolve(null),
  });
  return seen;
}

const rising = (xs: number[]) => xs.every((x, i) => x > 0 && x < 1 && (i === 0 || x >= xs[i - 1]));

it('ComfyUI: from its progress events', async () => {
  const p = await progressOf('t/comfy', { prompt: 'x', duration: 5 });
  expect(p).toEqual([0.2, 0.4, 0.6, 0.8, 0.99]);
});

it('Replicate and fal: from the tqdm lines of their logs', async () => {
  const r = await progressOf('t/rep', { prompt: 'x', duration: 5 });
  expect(r.length).toBeGreaterThan(0);
  expect(rising(r)).toBe(true);
  fal.script.push({ kind: 'queued', polls: 2 });
  const f = await progressOf('t/fal', { prompt: 'x', duration: 5 });
  expect(f.length).toBeGreaterThan(0);
  expect(rising(f)).toBe(true);
});

it('OpenAI: streamed pieces against max_tokens', async () => {
  expect(await progressOf('t/chat', { text: 'x', max_items: 1 })).toEqual([
    0.1, 0.2, 0.3, 0.4, 0.5,
  ]);
});

it('reads the last tqdm bar of a log', () => {
  expect(
    tqdmProgress(
      'loading\n 10%|█         | 1/10 [00:01<00:09]\r 40%|████      | 4/10 [00:04<00:06]\n',
    ),
  ).toBe(0.4);
  expect(tqdmProgress('no bars here')).toBeNull();
});
