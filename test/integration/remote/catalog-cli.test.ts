// The operator's catalog tools: `rendergate catalog check FILE` lists every problem (and secrets not
// set), `rendergate catalog import cog URL` drafts an entry from a Cog container's /openapi.json.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { checkCatalogFile, importCog } from '../../../src/cli/catalog.ts';
import { buildCatalog } from '../../../src/backends/catalog.ts';
import { cogFake, type CogFake } from '../../fakes/cog.ts';
import { videoModel } from './harness.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-catalog-cli-'));
let cog: CogFake;
beforeAll(async () => {
  cog = await cogFake();
});
afterAll(async () => {
  await cog.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('import cog: fields in x-order with types, bounds, defaults and enums; the entry loads once priced', async () => {
  let text = '';
  expect(
    await importCog(cog.base, 'acme/sdxl', (t) => {
      text += t;
    }),
  ).toBe(0);
  const [entry] = parse(text);
  expect(entry.backend).toEqual({ driver: 'cog', url: cog.base });
  expect(entry.fields).toEqual([
    { name: 'prompt', type: 'text', required: true, description: 'What to draw' },
    { name: 'image', type: 'url', required: false, media: 'image' },
    {
      name: 'steps',
      type: 'number',
      required: false,
      integer: true,
      minimum: 1,
      maximum: 50,
      default: 20,
    },
    {
      name: 'scheduler',
      type: 'enum',
      required: false,
      values: ['DDIM', 'K_EULER', 'DPMSolverMultistep'],
      default: 'K_EULER',
    },
    { name: 'guidance', type: 'number', required: false, minimum: 0, maximum: 20, default: 7.5 },
    { name: 'tile', type: 'toggle', required: false, default: false },
  ]);
  expect(entry.output).toEqual({ type: 'file', contentType: 'video/mp4' });
  expect(
    buildCatalog({ models: [{ ...entry, price: 'steps * 2' }] }).get('acme/sdxl'),
  ).toBeDefined();
});

it('check: every problem listed, secrets not set included; a sound catalog passes', async () => {
  const bad = path.join(dir, 'bad.yaml');
  fs.writeFileSync(
    bad,
    stringify({
      models: [
        videoModel('t/a', { driver: 'cog', url: 'nope' }),
        videoModel(
          't/b',
          { driver: 'fal', app: 'fal-ai/x', apiKey: '${env:RG_NOT_SET_ANYWHERE}' },
          { price: 'duration * 0.5' },
        ),
      ],
    }),
  );
  let text = '';
  expect(
    checkCatalogFile(bad, {}, (t) => {
      text += t;
    }),
  ).toBe(1);
  expect(text).toContain('backend url "nope" is not an http(s) address');
  expect(text).toMatch(/model "t\/b" price: /);

  const good = path.join(dir, 'good.yaml');
  fs.writeFileSync(
    good,
    stringify({
      models: [
        videoModel('t/b', { driver: 'fal', app: 'fal-ai/x', apiKey: '${env:RG_NOT_SET_ANYWHERE}' }),
      ],
    }),
  );
  text = '';
  expect(
    checkCatalogFile(good, {}, (t) => {
      text += t;
    }),
  ).toBe(1);
  expect(text).toContain('backend needs ${env:RG_NOT_SET_ANYWHERE}, which is not set here');
  text = '';
  expect(
    checkCatalogFile(good, { RG_NOT_SET_ANYWHERE: 'x' }, (t) => {
      text += t;
    }),
  ).toBe(0);
  expect(text).toContain('ok, 1 model (t/b)');

  // the command line itself
  const run = promisify(execFile);
  const r = await run(
    process.execPath,
    ['--import', 'tsx', 'src/main.ts', 'catalog', 'check', good],
    { cwd: ROOT, env: { ...process.env, RG_NOT_SET_ANYWHERE: 'x' } },
  );
  expect(r.stdout).toContain('ok, 1 model');
  await expect(
    run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'catalog', 'check', bad], {
      cwd: ROOT,
    }),
  ).rejects.toMatchObject({ code: 1 });
}, 60_000);
