import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImageToVideo } from '../../../src/backends/local/image-to-video.ts';
import { RenderError, type RenderOutput } from '../../../src/backends/types.ts';
import {
  context,
  difference,
  fileHash,
  frameThumb,
  makeWorkDir,
  probe,
  processesMentioning,
  scriptedServer,
  servePng,
  stillThumb,
  testPicture,
  unexpected,
} from './helpers.ts';

type Server = Awaited<ReturnType<typeof scriptedServer>>;
let server: Server;
let picture: Buffer;
const dirs: string[] = [];
const backend = createImageToVideo({ allowPrivateUrls: true });

beforeAll(async () => {
  picture = await testPicture(960, 540, [230, 120, 40]);
  const portrait = await testPicture(400, 800, [40, 160, 220]);
  server = await scriptedServer({
    '/a.png': servePng(picture),
    '/portrait.png': servePng(portrait),
    '/slow.png': (_q, r) => setTimeout(() => servePng(picture)(_q, r), 3000),
  });
});
afterAll(async () => {
  await server.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const work = () => {
  const d = makeWorkDir('rg-i2v-test-');
  dirs.push(d);
  return d;
};
const inputs = (over: Record<string, string | number | boolean> = {}) => ({
  prompt: 'a slow push-in on a sunset',
  image: server.url('/a.png'),
  guidance_scale: 0.5,
  duration: 5,
  ...over,
});

async function render(
  over: Record<string, string | number | boolean> = {},
  progress?: (f: number) => void,
): Promise<string> {
  const out: RenderOutput = await backend.run(
    inputs(over),
    context(work(), progress ? { progress } : {}),
  );
  expect(out).toMatchObject({ kind: 'file', contentType: 'video/mp4' });
  return (out as { path: string }).path;
}

describe('rendergate/image-to-video', () => {
  let file: string;
  const seen: number[] = [];
  beforeAll(async () => {
    file = await render({ negative_prompt: 'blurry, text' }, (f) => seen.push(f));
  });

  it('is a 1280×720 H.264 yuv420p MP4 of exactly 5 s at 25 fps, without audio', async () => {
    const p = await probe(file);
    expect(p.streams).toHaveLength(1);
    const [v] = p.streams;
    expect(v).toMatchObject({
      codec_type: 'video',
      codec_name: 'h264',
      width: 1280,
      height: 720,
      pix_fmt: 'yuv420p',
      r_frame_rate: '25/1',
    });
    expect(Math.abs(Number(p.format.duration) - 5)).toBeLessThanOrEqual(0.1);
    expect(Number(v.nb_frames)).toBe(125);
  });

  it('records prompt and negative prompt in the metadata', async () => {
    const tags = (await probe(file)).format.tags ?? {};
    expect(tags.title).toBe('a slow push-in on a sunset');
    expect(tags.comment).toContain('blurry, text');
    expect(tags.encoder).toBeUndefined(); // bitexact: no library versions in the file
  });

  it('puts the index first (faststart)', () => {
    const bytes = fs.readFileSync(file);
    expect(bytes.indexOf('moov')).toBeGreaterThan(0);
    expect(bytes.indexOf('moov')).toBeLessThan(bytes.indexOf('mdat'));
  });

  it('reports progress rising to 1', () => {
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(1);
    expect(seen.length).toBeGreaterThan(3);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1]);
  });

  it('renders identical bytes for identical inputs', async () => {
    const again = await render({ negative_prompt: 'blurry, text' });
    expect(fileHash(again)).toBe(fileHash(file));
  });

  it('starts on the picture and moves over it', async () => {
    const [first, last, still] = await Promise.all([
      frameThumb(file, 0),
      frameThumb(file, 124),
      stillThumb(picture),
    ]);
    expect(difference(first, still)).toBeLessThan(0.04);
    expect(difference(first, last)).toBeGreaterThan(0.03);
  });

  it('moves more with a higher guidance_scale', async () => {
    const [weak, strong] = await Promise.all([
      render({ guidance_scale: 0 }),
      render({ guidance_scale: 1 }),
    ]);
    const motion = async (f: string) =>
      difference(await frameThumb(f, 0), await frameThumb(f, 124));
    expect(await motion(strong)).toBeGreaterThan((await motion(weak)) * 1.5);
  });

  it('honours duration 10', async () => {
    const p = await probe(await render({ duration: 10, guidance_scale: 0.2 }));
    expect(Math.abs(Number(p.format.duration) - 10)).toBeLessThanOrEqual(0.1);
    expect(Number(p.streams[0].nb_frames)).toBe(250);
  });

  it('boxes a portrait picture into the landscape frame', async () => {
    const f = await render({ image: server.url('/portrait.png'), guidance_scale: 0 });
    const p = await probe(f);
    expect(p.streams[0]).toMatchObject({ width: 1280, height: 720 });
  });
});

describe('rendergate/image-to-video failures', () => {
  it('is cancelled promptly, leaving no ffmpeg and nothing outside its work directory', async () => {
    const root = makeWorkDir('rg-i2v-cancel-');
    dirs.push(root);
    const tmp = path.join(root, 'tmp');
    const workDir = path.join(root, 'work');
    fs.mkdirSync(tmp);
    fs.mkdirSync(workDir);
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      const controller = new AbortController();
      let encoding = false;
      const running = backend.run(
        inputs({ duration: 10, guidance_scale: 1 }),
        context(workDir, {
          signal: controller.signal,
          progress: (f) => {
            if (f > 0.15 && !encoding) {
              encoding = true;
              setTimeout(() => controller.abort(), 50);
            }
          },
        }),
      );
      const t0 = Date.now();
      const err = await running.then(unexpected, (e: unknown) => e as RenderError);
      expect(encoding).toBe(true);
      expect(err).toBeInstanceOf(RenderError);
      expect(err).toMatchObject({ code: 'RENDER_CANCELLED', retryable: false });
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(processesMentioning(workDir)).toEqual([]);
      expect(fs.readdirSync(tmp)).toEqual([]);
      expect(fs.readdirSync(root).sort()).toEqual(['tmp', 'work']);
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
  });

  it('answers an abort within a second of it', async () => {
    const workDir = makeWorkDir('rg-i2v-abort-');
    dirs.push(workDir);
    const controller = new AbortController();
    let abortedAt = 0;
    const running = backend.run(
      inputs({ duration: 10 }),
      context(workDir, {
        signal: controller.signal,
        progress: (f) => {
          if (f > 0.2 && !abortedAt) {
            abortedAt = Date.now();
            controller.abort();
          }
        },
      }),
    );
    const err = await running.then(unexpected, (e: unknown) => e as RenderError);
    expect(err.code).toBe('RENDER_CANCELLED');
    expect(Date.now() - abortedAt).toBeLessThan(10_000); // far less than the rest of a 10 s render
    expect(processesMentioning(workDir)).toEqual([]);
  });

  it('stops at the time limit with a retryable RENDER_TIMEOUT', async () => {
    const workDir = work();
    const t0 = Date.now();
    const err = await backend
      .run(inputs({ duration: 10 }), context(workDir, { timeLimitSeconds: 1 }))
      .then(unexpected, (e: unknown) => e as RenderError);
    expect(err).toMatchObject({ code: 'RENDER_TIMEOUT', retryable: true });
    expect(Date.now() - t0).toBeLessThan(30_000); // stopped at 1 s, not the render's own 2 minutes
    expect(processesMentioning(workDir)).toEqual([]);
  });

  it('counts a slow input fetch against the render time limit too', async () => {
    const err = await backend
      .run(inputs({ image: server.url('/slow.png') }), context(work(), { timeLimitSeconds: 0.5 }))
      .then(unexpected, (e: unknown) => e as RenderError);
    expect(err).toMatchObject({ code: 'RENDER_TIMEOUT', retryable: true });
  });

  it('fails permanently on a missing picture', async () => {
    const err = await backend
      .run(inputs({ image: server.url('/missing.png') }), context(work()))
      .then(unexpected, (e: unknown) => e as RenderError);
    expect(err).toMatchObject({ code: 'INPUT_NOT_FOUND', retryable: false });
  });

  it('refuses loopback pictures unless private addresses are allowed', async () => {
    const guarded = createImageToVideo({ allowPrivateUrls: false });
    const err = await guarded
      .run(inputs(), context(work()))
      .then(unexpected, (e: unknown) => e as RenderError);
    expect(err).toMatchObject({ code: 'INPUT_URL_REFUSED', retryable: false });
  });
});
