// The package as a user gets it: built and packed (`npm pack`), installed from the tarball into an empty
// directory, used from plain JavaScript against the real service, and its CLI run from that install,
// exit codes included. Tests reach no outside host, so the package's own dependencies are installed
// from tarballs packed from this checkout's node_modules, beside it (`npm install --offline`).
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';

const run = promisify(execFile);
const PKG = path.resolve(import.meta.dirname, '../../../packages/client');
const f = serviceFixture();
let dir: string;
let tarball: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-pack-'));
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: PKG,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const packed = JSON.parse(out.slice(out.indexOf('[')))[0];
  tarball = path.join(dir, packed.filename);
  const app = path.join(dir, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(
    path.join(app, 'package.json'),
    JSON.stringify({ name: 'app', private: true, type: 'module' }),
  );
  const deps = [...dependencyDirs(PKG)].map((d) => {
    const o = execFileSync(
      'npm',
      ['pack', '--json', '--ignore-scripts', '--pack-destination', dir, d],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    return path.join(dir, JSON.parse(o.slice(o.indexOf('[')))[0].filename);
  });
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball, ...deps], {
    cwd: app,
    stdio: 'pipe',
  });
}, 180_000);

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The installed folders of a package's runtime dependencies, transitively, resolved as Node would. */
function dependencyDirs(pkgDir: string, found = new Set<string>()): Set<string> {
  const require = createRequire(path.join(pkgDir, 'package.json'));
  const deps = Object.keys(
    JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).dependencies ?? {},
  );
  for (const name of deps) {
    const dir = path.dirname(require.resolve(`${name}/package.json`));
    if (!found.has(dir)) {
      found.add(dir);
      dependencyDirs(dir, found);
    }
  }
  return found;
}

const app = () => path.join(dir, 'app');
async function cli(key: string, args: string[]) {
  try {
    const r = await run(path.join(app(), 'node_modules/.bin/rendergate-cli'), args, {
      cwd: app(),
      env: { ...process.env, RENDERGATE_API_KEY: key, RENDERGATE_BASE_URL: f.svc.base },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('the packed package', () => {
  it('holds the built code, its types and the CLI, and no sources or tests', () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining([
        'package/dist/index.js',
        'package/dist/index.d.ts',
        'package/dist/schema.d.ts',
        'package/bin/rendergate-cli.js',
        'package/package.json',
        'package/README.md',
      ]),
    );
    expect(files.filter((p) => p.startsWith('package/src/') || p.endsWith('.test.ts'))).toEqual([]);
  });

  it("type-checks under tsc's defaults: `tsc --strict` with no tsconfig, no @types/node", async () => {
    // TypeScript's defaults (target and lib ES5, CommonJS, node10 resolution): `#private` in a
    // declaration would fail TS18028, and the `./files` subpath resolves only through typesVersions.
    fs.writeFileSync(
      path.join(app(), 'check.ts'),
      [
        "import { Rendergate, RendergateError } from '@rendergate/client';",
        "import { readImageFile } from '@rendergate/client/files';",
        "const rg = new Rendergate({ apiKey: 'rg_live_x' });",
        'export const used = [rg, RendergateError, readImageFile];',
      ].join('\n'),
    );
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    for (const extra of [[], ['--module', 'nodenext']]) {
      const r = await run(process.execPath, [tsc, '--strict', '--noEmit', ...extra, 'check.ts'], {
        cwd: app(),
      }).catch((e: { stdout: string }) => ({ stdout: e.stdout, failed: true }));
      expect(r.stdout, extra.join(' ')).toBe('');
    }
  });

  it('works from plain JavaScript in an empty project', async () => {
    const { key } = await f.api.account(300);
    fs.writeFileSync(
      path.join(app(), 'main.js'),
      `
      import { Rendergate, RendergateError, verifyWebhook } from '@rendergate/client';
      const rg = new Rendergate();
      const me = await rg.me();
      const g = await rg.run('rendergate/shot-list', { text: 'A boat leaves the harbour. A gull lands.', mode: 'keywords' });
      let code;
      try { await rg.generations.get('gen_nothing'); } catch (e) { code = e instanceof RendergateError && e.code; }
      console.log(JSON.stringify({ balance: me.balanceCents, status: g.status, text: g.textOutput, code, verify: typeof verifyWebhook }));
    `,
    );
    const r = await run(process.execPath, ['main.js'], {
      cwd: app(),
      env: { ...process.env, RENDERGATE_API_KEY: key, RENDERGATE_BASE_URL: f.svc.base },
    });
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      balance: 300,
      status: 'succeeded',
      code: 'GENERATION_NOT_FOUND',
      verify: 'function',
    });
    expect(out.text.length).toBeGreaterThan(0);
  });

  it('runs the CLI from the install: JSON when piped, typed inputs, files, and distinct exit codes', async () => {
    const { key } = await f.api.account(500);
    const models = await cli(key, ['models']);
    expect(models.code).toBe(0);
    expect(JSON.parse(models.stdout).map((m: { id: string }) => m.id)).toContain(
      'rendergate/image-to-video',
    );
    const quote = await cli(key, [
      'quote',
      'rendergate/image-to-video',
      '-i',
      'prompt=push in',
      '-i',
      `image=${f.img.url('/a.png')}`,
      '-i',
      'duration=10',
      '-i',
      'guidance_scale=0.8',
    ]);
    expect(JSON.parse(quote.stdout)).toMatchObject({
      costCents: 60,
      inputs: { duration: 10, guidance_scale: 0.8 },
    });

    fs.writeFileSync(
      path.join(app(), 'story.txt'),
      'The camera rises over the harbour at dawn. Fishing boats leave one by one.',
    );
    const text = await cli(key, [
      'run',
      'rendergate/shot-list',
      '-i',
      'text=@story.txt',
      '-i',
      'mode=shot_list',
      '-i',
      'max_items=3',
      '--out',
      'shots.txt',
    ]);
    expect(text.code).toBe(0);
    const g = JSON.parse(text.stdout);
    expect(g.status).toBe('succeeded');
    expect(fs.readFileSync(path.join(app(), 'shots.txt'), 'utf8')).toBe(g.textOutput);

    const video = await cli(key, [
      'run',
      'rendergate/image-to-video',
      '-i',
      'prompt=a slow push-in',
      '-i',
      `image=${f.img.url('/b.png')}`,
      '--out',
      'clip.mp4',
    ]);
    expect(video.code).toBe(0);
    const clip = fs.readFileSync(path.join(app(), 'clip.mp4'));
    expect(clip.subarray(4, 8).toString()).toBe('ftyp');
    const vid = JSON.parse(video.stdout).id;
    const dl = await cli(key, ['download', vid, '--out', 'again.mp4']);
    expect(JSON.parse(dl.stdout)).toMatchObject({
      id: vid,
      bytes: clip.length,
      contentType: 'video/mp4',
    });
    expect(JSON.parse((await cli(key, ['get', vid])).stdout).status).toBe('succeeded');
    expect(
      JSON.parse((await cli(key, ['list', '--limit', '1'])).stdout).map(
        (x: { id: string }) => x.id,
      ),
    ).toEqual([vid]);
    expect(JSON.parse((await cli(key, ['delete', g.id])).stdout)).toEqual({
      id: g.id,
      deleted: true,
    });

    const failed = await cli(key, [
      'run',
      'rendergate/image-to-video',
      '-i',
      'prompt=x',
      '-i',
      `image=${f.img.url('/missing.png')}`,
    ]);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout).status).toBe('failed');
    const usage = await cli(key, ['run', 'rendergate/image-to-video', '-i', 'duration=seven']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/duration/);
    expect((await cli(key, ['frobnicate'])).code).toBe(2);
    const api = await cli(key + 'x', ['me']);
    expect(api.code).toBe(3);
    expect(JSON.parse(api.stderr)).toMatchObject({ status: 401, code: 'API_KEY_INVALID' });
    expect((await cli(key, ['model', 'nobody/nothing'])).code).toBe(3);
  });

  it('uploads from the CLI: `upload FILE`, and `-i image=@file` renders from an uploaded image', async () => {
    const { key } = await f.api.account(500);
    const photo = path.join(app(), 'photo.png');
    fs.writeFileSync(photo, Buffer.from(await (await fetch(f.img.url('/a.png'))).arrayBuffer()));
    const up = await cli(key, ['upload', 'photo.png']);
    expect(up.code).toBe(0);
    expect(JSON.parse(up.stdout)).toMatchObject({
      id: expect.stringMatching(/^upl_/),
      contentType: 'image/png',
      width: 640,
      height: 360,
    });
    const r = await cli(key, [
      'run',
      'rendergate/image-to-video',
      '-i',
      'prompt=a slow push-in',
      '-i',
      'image=@photo.png',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const g = JSON.parse(r.stdout);
    expect(g.status).toBe('succeeded');
    expect(g.inputs.image).toMatch(new RegExp(`^${f.svc.base}/v1/uploads/upl_`));
    expect((await cli(key, ['upload', 'nothing.png'])).code).toBe(2);
  });
});
