// Render overhead: each built-in video model through the API (create, then poll every 20 ms until it
// has succeeded, end to end) against the same renderer's run() called directly in this process with
// the same resolved inputs (the model's defaults), the same loopback image server and the same time
// limit. Median of 3 each, the two interleaved so that noise on a shared machine hits both alike.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLocalBackends } from '../src/backends/local/index.ts';
import { loadCatalog } from '../src/backends/catalog.ts';
import type { FieldDef, ModelDef } from '../src/domain/catalog.ts';
import type { LocalBinding } from '../src/backends/local/catalog.ts';
import { parseRenderRequest } from '../src/domain/inputs.ts';
import type { BenchContext } from './lib/context.ts';
import { profiled } from './lib/context.ts';
import { imageServer } from './lib/images.ts';
import type { Result } from './lib/report.ts';
import { call, makeAccount, nextIdempotencyKey, startRendergate } from './lib/service.ts';
import { median, round } from './lib/stats.ts';

const POLL_MS = 20;

/** The required inputs of a model, filled in plausibly; every optional field keeps its default. */
function inputsFor(model: ModelDef, image: (n: number) => string): Record<string, unknown> {
  let images = 0;
  const value = (f: FieldDef): unknown => {
    switch (f.type) {
      case 'url':
        return image(images++);
      case 'text':
        return 'A slow push in on a lighthouse at dusk while the waves break below';
      case 'number':
        return f.default ?? f.minimum ?? 1;
      case 'enum':
        return f.default ?? f.values![0];
      case 'toggle':
        return f.default ?? false;
    }
  };
  return Object.fromEntries(model.fields.filter((f) => f.required).map((f) => [f.name, value(f)]));
}

export async function run(ctx: BenchContext): Promise<Result[]> {
  const catalog = loadCatalog();
  // The built-in catalog's video models, all rendered here by a built-in renderer.
  const videoModels = catalog.models.filter(
    (m) => m.kind === 'video' && m.backend.driver === 'local',
  );
  const images = await imageServer();
  const svc = await startRendergate(ctx, await ctx.pg.createDatabase('bench_render'), {
    role: 'serve',
    env: { RENDERGATE_ALLOW_PRIVATE_URLS: '1' },
  });
  const backends = createLocalBackends({ allowPrivateUrls: true });
  const results: Result[] = [];
  try {
    const acct = await makeAccount(svc.base);
    const runs = ctx.quick ? 1 : 3;
    for (const model of videoModels) {
      const body = {
        modelId: model.id,
        inputs: inputsFor(model, (n) => images.url(n % 2 === 0 ? '/a.png' : '/b.png')),
      };
      const { inputs } = parseRenderRequest(catalog, body);
      const backend = backends[(model.backend as LocalBinding).renderer];

      const direct = async (): Promise<number> => {
        const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-bench-render-'));
        try {
          const t0 = performance.now();
          const out = await backend.run(inputs, {
            signal: new AbortController().signal,
            progress: () => {},
            workDir,
            timeLimitSeconds: model.timeLimitSeconds,
            attemptId: 'bench-1',
            readUpload: () => Promise.resolve(null),
          });
          const ms = performance.now() - t0;
          if (out.kind !== 'file' || !fs.existsSync(out.path))
            throw new Error(`${model.id}: direct run gave no file`);
          return ms;
        } finally {
          fs.rmSync(workDir, { recursive: true, force: true });
        }
      };
      const viaApi = async (): Promise<number> => {
        const t0 = performance.now();
        const created = await call(svc.base, 'POST', '/v1/generations', {
          key: acct.key,
          body,
          headers: { 'idempotency-key': nextIdempotencyKey() },
        });
        if (created.status !== 202)
          throw new Error(`${model.id}: create -> ${created.status} ${created.text}`);
        for (;;) {
          const g = await call(svc.base, 'GET', `/v1/generations/${created.json.id}`, {
            key: acct.key,
          });
          if (g.json?.status === 'succeeded') return performance.now() - t0;
          if (g.json?.status !== 'queued')
            throw new Error(
              `${model.id}: via the API the render ended ${g.json?.status}: ${JSON.stringify(g.json?.error)}`,
            );
          if (performance.now() - t0 > model.timeLimitSeconds * 1000 * 2)
            throw new Error(`${model.id}: no result via the API`);
          await new Promise((r) => setTimeout(r, POLL_MS));
        }
      };

      try {
        const d: number[] = [];
        const a: number[] = [];
        for (let i = 0; i < runs; i++) {
          // Alternate which path goes first, so a cold first run (disk cache, ffmpeg binary) or a
          // burst of noise does not always land on the same side.
          const api = async () =>
            a.push(
              i === 0
                ? await profiled(ctx, svc.child, `render-${model.id.split('/')[1]}`, viaApi)
                : await viaApi(),
            );
          if (i % 2 === 0) {
            d.push(await direct());
            await api();
          } else {
            await api();
            d.push(await direct());
          }
        }
        const md = median(d)!;
        const ma = median(a)!;
        ctx.log(
          `  render ${model.id}: API ${ma.toFixed(0)} ms, direct ${md.toFixed(0)} ms (${(ma / md).toFixed(2)}×)`,
        );
        results.push({
          scenario: 'render',
          variant: model.id,
          concurrency: 1,
          rps: null,
          p50: round(ma, 1),
          p99: null,
          baseline: { name: 'direct run()', ms: round(md, 1) },
          ratio: round(ma / md, 3),
          target: '≤1.20×',
          pass: ma / md <= 1.2,
          extra: {
            apiMs: a.map((x) => round(x, 1)),
            directMs: d.map((x) => round(x, 1)),
            inputs,
            pollMs: POLL_MS,
          },
        });
      } catch (e) {
        ctx.log(`  render ${model.id} failed: ${(e as Error).message}`);
        results.push({
          scenario: 'render',
          variant: model.id,
          concurrency: 1,
          rps: null,
          p50: null,
          p99: null,
          baseline: null,
          ratio: null,
          target: '≤1.20×',
          pass: false,
          note: (e as Error).message.slice(0, 120),
        });
      }
    }
    return results;
  } finally {
    await svc.stop();
    await images.close();
  }
}
