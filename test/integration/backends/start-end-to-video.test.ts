import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStartEndToVideo } from '../../../src/backends/local/start-end-to-video.ts';
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
let first: Buffer;
let last: Buffer;
const dirs: string[] = [];
const backend = createStartEndToVideo({ allowPrivateUrls: true });

beforeAll(async () => {
  first = await testPicture(640, 360, [240, 120, 40]);
  last = await testPicture(640, 360, [40, 140, 240]);
  server = await scriptedServer({
    '/a.png': servePng(first),
    '/b.png': servePng(last),
    '/never.png': () => {
      /* held until the client gives up */
    },
  });
});
afterAll(async () => {
  await server.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const work = () => {
  const d = makeWorkDir('rg-se2v-test-');
  dirs.push(d);
  return d;
};
const inputs = (over: Record<string, string | number | boolean> = {}) => ({
  prompt: 'morning to night',
  image: server.url('/a.png'),
  last_image: server.url('/b.png'),
  duration: 5,
  resolution: '720p',
  bgm: true,
  movement_amplitude: 'auto',
  ...over,
});

async function render(over: Record<string, string | number | boolean> = {}): Promise<string> {
  const out: RenderOutput = await backend.run(inputs(over), context(work()));
  expect(out).toMatchObject({ kind: 'file', contentType: 'video/mp4' });
  return (out as { path: string }).path;
}

const near = (value: string | undefined, target: number) =>
  expect(Math.abs(Number(value) - target)).toBeLessThanOrEqual(0.1);

describe('rendergate/start-end-to-video at default settings', () => {
  let file: string;
  beforeAll(async () => {
    file = await render();
  });

  it('is a 1280×720 H.264 yuv420p MP4 of 5 s with an AAC music track', async () => {
    const p = await probe(file);
    const video = p.streams.filter((s) => s.codec_type === 'video');
    const audio = p.streams.filter((s) => s.codec_type === 'audio');
    expect(video).toHaveLength(1);
    expect(audio).toHaveLength(1);
    expect(video[0]).toMatchObject({
      codec_name: 'h264',
      width: 1280,
      height: 720,
      pix_fmt: 'yuv420p',
    });
    expect(audio[0]).toMatchObject({ codec_name: 'aac', channels: 2, sample_rate: '44100' });
    near(p.format.duration, 5);
    near(video[0].duration, 5);
    near(audio[0].duration, 5);
    expect(p.format.tags?.title).toBe('morning to night');
    expect(p.format.tags?.comment).toMatch(/^seed \d+, movement (small|medium|large)$/);
  });

  it('starts on image, ends on last_image and changes in between', async () => {
    const [f0, fMid, fEnd] = await Promise.all([
      frameThumb(file, 0),
      frameThumb(file, 62),
      frameThumb(file, 124),
    ]);
    const [a, b] = await Promise.all([stillThumb(first), stillThumb(last)]);
    expect(difference(f0, a)).toBeLessThan(0.04);
    expect(difference(fEnd, b)).toBeLessThan(0.04);
    expect(difference(fEnd, b)).toBeLessThan(difference(fEnd, a));
    expect(difference(f0, fEnd)).toBeGreaterThan(0.1);
    // The middle is a blend: unlike either end.
    expect(difference(fMid, a)).toBeGreaterThan(0.03);
    expect(difference(fMid, b)).toBeGreaterThan(0.03);
  });

  it('renders identical bytes for identical inputs without a seed', async () => {
    expect(fileHash(await render())).toBe(fileHash(file));
  });
});

describe('rendergate/start-end-to-video options', () => {
  it('has no audio stream at all when bgm is off, and honours resolution and duration', async () => {
    const p = await probe(await render({ bgm: false, resolution: '540p', duration: 3 }));
    expect(p.streams.map((s) => s.codec_type)).toEqual(['video']);
    expect(p.streams[0]).toMatchObject({
      width: 960,
      height: 540,
      codec_name: 'h264',
      pix_fmt: 'yuv420p',
    });
    near(p.format.duration, 3);
  });

  it('renders 1080p', async () => {
    const p = await probe(await render({ resolution: '1080p', duration: 1, bgm: true }));
    expect(p.streams.find((s) => s.codec_type === 'video')).toMatchObject({
      width: 1920,
      height: 1080,
    });
    near(p.format.duration, 1);
  });

  it('renders the same bytes for the same seed and others for another seed', async () => {
    const base = { resolution: '540p', duration: 2, movement_amplitude: 'large' };
    const [a1, a2, b] = await Promise.all([
      render({ ...base, seed: 11 }),
      render({ ...base, seed: 11 }),
      render({ ...base, seed: 12 }),
    ]);
    expect(fileHash(a1)).toBe(fileHash(a2));
    expect(fileHash(a1)).not.toBe(fileHash(b));
    // Different motion, not just different audio: the middle frames differ.
    expect(difference(await frameThumb(a1, 25), await frameThumb(b, 25))).toBeGreaterThan(0.005);
  });

  it('moves more with a larger movement_amplitude', async () => {
    const base = {
      resolution: '540p',
      duration: 2,
      bgm: false,
      seed: 5,
      image: server.url('/a.png'),
      last_image: server.url('/a.png'),
    };
    const [small, large] = await Promise.all([
      render({ ...base, movement_amplitude: 'small' }),
      render({ ...base, movement_amplitude: 'large' }),
    ]);
    const still = await stillThumb(first);
    const swing = async (f: string) => difference(await frameThumb(f, 25), still);
    expect(await swing(large)).toBeGreaterThan((await swing(small)) * 1.5);
    expect((await probe(large)).format.tags?.comment).toMatch(/movement large/);
  });

  it('chooses a livelier move for auto when the pictures are alike', async () => {
    const same = await render({
      resolution: '540p',
      duration: 1,
      bgm: false,
      last_image: server.url('/a.png'),
    });
    expect((await probe(same)).format.tags?.comment).toMatch(/movement large/);
  });
});

describe('rendergate/start-end-to-video failures', () => {
  it('is cancelled promptly and leaves no ffmpeg running', async () => {
    const workDir = work();
    const controller = new AbortController();
    let abortedAt = 0;
    const err = await backend
      .run(
        inputs({ duration: 10, resolution: '1080p' }),
        context(workDir, {
          signal: controller.signal,
          progress: (f) => {
            if (f > 0.2 && !abortedAt) {
              abortedAt = Date.now();
              controller.abort();
            }
          },
        }),
      )
      .then(unexpected, (e: unknown) => e as RenderError);
    expect(err).toBeInstanceOf(RenderError);
    expect(err).toMatchObject({ code: 'RENDER_CANCELLED', retryable: false });
    expect(Date.now() - abortedAt).toBeLessThan(10_000); // far less than the rest of a 10 s 1080p render
    expect(processesMentioning(workDir)).toEqual([]);
  });

  it('stops at the time limit with a retryable RENDER_TIMEOUT', async () => {
    const workDir = work();
    const err = await backend
      .run(inputs({ duration: 10, resolution: '1080p' }), context(workDir, { timeLimitSeconds: 1 }))
      .then(unexpected, (e: unknown) => e as RenderError);
    expect(err).toMatchObject({ code: 'RENDER_TIMEOUT', retryable: true });
    expect(processesMentioning(workDir)).toEqual([]);
  });

  it('fails at once when one picture is missing, without waiting for the other', async () => {
    const t0 = Date.now();
    const err = await backend
      .run(
        inputs({ image: server.url('/never.png'), last_image: server.url('/missing.png') }),
        context(work()),
      )
      .then(unexpected, (e: unknown) => e as RenderError);
    expect(err).toMatchObject({ code: 'INPUT_NOT_FOUND', retryable: false });
    expect(Date.now() - t0).toBeLessThan(15_000); // not held until the other fetch's 30 s timeout
  });
});
