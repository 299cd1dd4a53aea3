// Backends in the catalog: each driver's keys checked, every problem listed; the CEL of `inputs`,
// `bindings`, `messages` and `params` compiled at load and tried on sample inputs; secrets resolved
// from the environment at start, a missing one refused by name.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { createBackends } from '../../../src/backends/registry.ts';
import { Metrics } from '../../../src/metrics/metrics.ts';
import { loadModels, problemsOf, rawModel, writeTemp } from './catalog-fixtures.ts';
import { stringify } from 'yaml';
import { loadCatalog } from '../../../src/backends/catalog.ts';

const text = (backend: unknown) =>
  rawModel({
    kind: 'text',
    output: { type: 'text' },
    backend,
    openai: { input: 'prompt' },
    fields: [...rawModel().fields, { name: 'prompt', type: 'text', maxLength: 100 }],
  });

describe('catalog backends', () => {
  it('accepts each driver and keeps its settings', () => {
    const c = loadModels(
      rawModel({
        id: 't/cog',
        backend: {
          driver: 'cog',
          urls: ['http://gpu-1:5000/', 'http://gpu-2:5000'],
          concurrencyPerUrl: 2,
          inputs: { num_frames: 'n * 8' },
        },
      }),
      text({
        driver: 'openai',
        url: 'http://vllm:8000/v1',
        model: 'q',
        apiKey: '${env:LLM_KEY}',
        messages: [{ role: 'user', content: "'n = ' + string(n)" }],
        params: { max_tokens: 'n * 80' },
      }),
      rawModel({
        id: 't/rep',
        backend: {
          driver: 'replicate',
          model: 'owner/name',
          apiToken: '${env:REPLICATE_API_TOKEN}',
          inputs: { steps: 'n' },
        },
      }),
      rawModel({
        id: 't/fal',
        backend: {
          driver: 'fal',
          app: 'fal-ai/some-model',
          apiKey: '${env:FAL_KEY}',
          baseUrl: 'http://127.0.0.1:9',
        },
      }),
    );
    expect(c.get('t/cog')!.def.backend).toEqual({
      driver: 'cog',
      urls: ['http://gpu-1:5000', 'http://gpu-2:5000'],
      concurrencyPerUrl: 2,
      inputs: { num_frames: 'n * 8' },
    });
    expect(c.get('t/cog')!.backendCel.inputs!.evaluate({ n: 3 })).toEqual({ num_frames: 24 });
    expect(c.get('t/a')!.backendCel.messages!.evaluate({ n: 3 })).toEqual({ 0: 'n = 3' });
    expect(c.get('t/a')!.backendCel.params!.evaluate({ n: 3 })).toEqual({ max_tokens: 240 });
    expect(c.get('t/rep')!.def.backend).toMatchObject({ baseUrl: 'https://api.replicate.com' });
    expect(c.get('t/fal')!.def.backend).toMatchObject({ baseUrl: 'http://127.0.0.1:9' });
  });

  it('lists every problem of a backend', () => {
    expect(
      problemsOf(
        rawModel({
          id: 't/1',
          backend: {
            driver: 'cog',
            url: 'ftp://x',
            urls: ['http://a'],
            concurrencyPerUrl: 0,
            extra: 1,
          },
        }),
        rawModel({ id: 't/2', backend: { driver: 'cog', url: 'http://a', inputs: { x: 'n +' } } }),
        rawModel({
          id: 't/3',
          backend: { driver: 'openai', url: 'http://a/v1', model: 'm', messages: [] },
        }),
        rawModel({
          id: 't/4',
          backend: { driver: 'replicate', model: 'nope', apiToken: '${env:1BAD}' },
        }),
        rawModel({
          id: 't/5',
          backend: {
            driver: 'cog',
            url: 'http://a',
            inputs: { x: "n == 1 ? 'a' : inputs.missing" },
          },
        }),
        rawModel({ id: 't/6', backend: { driver: 'grpc' } }),
        rawModel({
          id: 't/7',
          backend: {
            driver: 'openai',
            url: 'http://a/v1',
            model: 'm',
            messages: [{ role: 'user', content: "'x'" }],
          },
        }),
      ),
    ).toEqual([
      'model "t/1": unknown backend key "extra" for driver cog',
      'model "t/1": backend takes url or urls, not both',
      'model "t/1": backend.concurrencyPerUrl must be a positive integer',
      'model "t/3": backend.messages must be a non-empty list of { role, content } (content a CEL expression)',
      'model "t/4": backend.model must be owner/name',
      'model "t/4": backend.apiToken: "${env:1BAD}" does not name an environment variable',
      'model "t/6": backend.driver must be one of local, cog, comfyui, openai, replicate, fal',
      'model "t/7": the openai driver answers with text: the model needs output {type: text}',
      expect.stringMatching(/^model "t\/2": backend inputs\.x does not parse/),
      expect.stringMatching(
        /^model "t\/5": backend inputs\.x failed: .*missing.* \(for inputs \{"n":5\}\)/,
      ),
    ]);
  });

  it('loads a ComfyUI workflow relative to the catalog and checks bindings against its nodes', () => {
    const dir = path.dirname(writeTemp('x'));
    fs.writeFileSync(
      path.join(dir, 'wf.json'),
      JSON.stringify({
        6: { class_type: 'CLIPTextEncode', inputs: { text: '' } },
        9: { class_type: 'SaveImage', inputs: {} },
      }),
    );
    const ok = rawModel({
      backend: {
        driver: 'comfyui',
        url: 'http://c:8188',
        workflow: 'wf.json',
        bindings: { '6.inputs.text': "'n' + string(n)" },
        outputNode: '9',
      },
    });
    const c = loadModels(ok);
    expect(c.get('t/a')!.def.backend).toMatchObject({
      driver: 'comfyui',
      graph: { 6: { class_type: 'CLIPTextEncode' } },
      outputNode: '9',
    });
    expect(
      problemsOf(
        rawModel({
          backend: {
            driver: 'comfyui',
            url: 'http://c:8188',
            workflow: 'wf.json',
            bindings: { '7.inputs.text': "'x'", '6.text': "'y'" },
            outputNode: '8',
          },
        }),
      ),
    ).toEqual([
      'model "t/a": backend.bindings "7.inputs.text": the workflow has no node "7"',
      'model "t/a": backend.bindings "6.text" must be "<node id>.inputs.<input name>"',
      'model "t/a": backend.outputNode "8" is not a node id of the workflow',
    ]);
    expect(
      problemsOf(
        rawModel({
          backend: {
            driver: 'comfyui',
            url: 'http://c:8188',
            workflow: 'missing.json',
            bindings: {},
          },
        }),
      )[0],
    ).toMatch(/backend.workflow missing.json: ENOENT/);
  });

  it('reads secrets from the environment at start; a missing one stops the start, named', () => {
    const file = writeTemp(
      stringify({
        models: [
          text({
            driver: 'openai',
            url: 'http://127.0.0.1:9/v1',
            model: 'm',
            apiKey: '${env:RG_FAL_KEY_TEST}',
            messages: [{ role: 'user', content: "'hi'" }],
          }),
        ],
      }),
    );
    const catalog = loadCatalog(file);
    const config = loadConfig({ RENDERGATE_DATA_DIR: '/tmp/x' });
    expect(() => createBackends(config, catalog, new Metrics(), { env: {} })).toThrowError(
      /RG_FAL_KEY_TEST: required by the catalog/,
    );
    expect(() =>
      createBackends(config, catalog, new Metrics(), { env: { RG_FAL_KEY_TEST: 'secret-value' } }),
    ).not.toThrow();
    // an API process renders nothing and needs no model server's secret
    expect(() =>
      createBackends(config, catalog, new Metrics(), { env: {}, render: false }),
    ).not.toThrow();
  });
});

describe('docs/backends.md', () => {
  it('every complete catalog example loads', () => {
    const doc = fs.readFileSync(
      path.resolve(import.meta.dirname, '../../../docs/backends.md'),
      'utf8',
    );
    const blocks = [...doc.matchAll(/```yaml\n(models:[\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks.length).toBe(5);
    const dir = path.dirname(writeTemp('x'));
    fs.mkdirSync(path.join(dir, 'workflows'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'workflows', 'flux.json'),
      JSON.stringify({
        3: { class_type: 'KSampler', inputs: {} },
        6: { class_type: 'CLIPTextEncode', inputs: {} },
        9: { class_type: 'SaveImage', inputs: {} },
      }),
    );
    for (const block of blocks) expect(loadCatalog(writeTemp(block)).models).toHaveLength(1);
  });
});
