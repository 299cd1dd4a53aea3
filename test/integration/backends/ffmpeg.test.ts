import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runFfmpeg, runningFfmpegCount } from '../../../src/backends/local/ffmpeg.ts';
import { RenderError } from '../../../src/backends/types.ts';
import { makeWorkDir, probe, processesMentioning } from './helpers.ts';
import { waitFor } from '../../helpers/wait.ts';

const dirs: string[] = [];
const work = () => {
  const d = makeWorkDir('rg-ffmpeg-test-');
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A long synthetic encode: enough work to still be running when the test intervenes. */
const longEncode = (out: string) => [
  '-f',
  'lavfi',
  '-i',
  'testsrc2=size=1920x1080:rate=25:duration=120',
  '-c:v',
  'libx264',
  '-preset',
  'medium',
  out,
];

async function rejection(p: Promise<unknown>): Promise<RenderError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(RenderError);
    return e as RenderError;
  }
  throw new Error('expected a rejection');
}

describe('runFfmpeg', () => {
  it('encodes and reports progress from 0 to 1', async () => {
    const dir = work();
    const out = path.join(dir, 'out.mp4');
    const seen: number[] = [];
    await runFfmpeg({
      args: [
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=320x240:rate=25:duration=2',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        out,
      ],
      workDir: dir,
      signal: new AbortController().signal,
      timeLimitMs: 30_000,
      outputSeconds: 2,
      onProgress: (f) => seen.push(f),
    });
    expect(Number((await probe(out)).format.duration)).toBeCloseTo(2, 1);
    expect(seen.at(-1)).toBe(1);
    expect(seen.every((f, i) => f >= 0 && f <= 1 && (i === 0 || f > seen[i - 1]))).toBe(true);
  });

  it('fails with RENDERER_FAILED and the tail of stderr', async () => {
    const dir = work();
    const err = await rejection(
      runFfmpeg({
        args: ['-i', path.join(dir, 'missing.png'), path.join(dir, 'out.mp4')],
        workDir: dir,
        signal: new AbortController().signal,
        timeLimitMs: 10_000,
      }),
    );
    expect(err).toMatchObject({ code: 'RENDERER_FAILED', retryable: false });
    expect(err.message).toMatch(/exit code 1.*missing\.png.*No such file/s);
    expect(err.message).not.toContain(dir); // the work directory's path is internal
    expect(err.message.length).toBeLessThan(2300);
  });

  it('is killed promptly on abort, leaving no process behind', async () => {
    const dir = work();
    const controller = new AbortController();
    const started = runFfmpeg({
      args: longEncode(path.join(dir, 'out.mp4')),
      workDir: dir,
      signal: controller.signal,
      timeLimitMs: 60_000,
    });
    await waitFor('ffmpeg to run', () => processesMentioning(dir).length === 1);
    const t0 = Date.now();
    controller.abort();
    const err = await rejection(started);
    expect(Date.now() - t0).toBeLessThan(30_000); // killed, not the long encode nor its 60 s limit
    expect(err).toMatchObject({ code: 'RENDER_CANCELLED', retryable: false });
    expect(processesMentioning(dir)).toEqual([]);
    expect(runningFfmpegCount()).toBe(0);
  });

  it('never starts when the signal is already aborted', async () => {
    const dir = work();
    const err = await rejection(
      runFfmpeg({
        args: longEncode(path.join(dir, 'out.mp4')),
        workDir: dir,
        signal: AbortSignal.abort(),
        timeLimitMs: 60_000,
      }),
    );
    expect(err.code).toBe('RENDER_CANCELLED');
    expect(processesMentioning(dir)).toEqual([]);
  });

  it('is killed at its time limit with a retryable RENDER_TIMEOUT', async () => {
    const dir = work();
    const t0 = Date.now();
    const err = await rejection(
      runFfmpeg({
        args: longEncode(path.join(dir, 'out.mp4')),
        workDir: dir,
        signal: new AbortController().signal,
        timeLimitMs: 400,
      }),
    );
    expect(err).toMatchObject({ code: 'RENDER_TIMEOUT', retryable: true });
    expect(Date.now() - t0).toBeLessThan(30_000); // the 0.4 s limit, not the long encode
    expect(processesMentioning(dir)).toEqual([]);
  });

  it('runs in the work directory with TMPDIR pointing there', async () => {
    const dir = work();
    // A relative output name lands in the working directory.
    await runFfmpeg({
      args: [
        '-f',
        'lavfi',
        '-i',
        'color=c=red:size=64x64:duration=0.2',
        '-frames:v',
        '1',
        'relative.png',
      ],
      workDir: dir,
      signal: new AbortController().signal,
      timeLimitMs: 10_000,
    });
    expect(fs.existsSync(path.join(dir, 'relative.png'))).toBe(true);
    expect(fs.existsSync(path.join(os.tmpdir(), 'relative.png'))).toBe(false);
  });
});
