// An abort that lands while ffmpeg or the fetcher is between an `await` and the point where it listens for
// aborts. Both once missed it: the signal had already fired, so the listener they added never ran, and the
// work went on (ffmpeg encoded to the end; the fetch waited for the server however long it took).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchImage } from '../../../src/backends/local/fetch-image.ts';
import { runFfmpeg, runningFfmpegCount } from '../../../src/backends/local/ffmpeg.ts';
import { RenderError } from '../../../src/backends/types.ts';

const dirs: string[] = [];
const workDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-abort-race-'));
  dirs.push(d);
  return d;
};

/** Process ids whose command line mentions `needle`, from /proc. */
function processesMentioning(needle: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle))
        found.push(Number(entry));
    } catch {
      /* exited meanwhile */
    }
  }
  return found;
}

async function rejection(p: Promise<unknown>): Promise<RenderError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(RenderError);
    return e as RenderError;
  }
  throw new Error('expected a rejection, but it succeeded');
}

let server: http.Server;
let base = '';
const hits: Record<string, number> = {};

beforeAll(async () => {
  const png = await sharp({ create: { width: 32, height: 18, channels: 3, background: '#884422' } })
    .png()
    .toBuffer();
  server = http.createServer((req, res) => {
    hits[req.url ?? ''] = (hits[req.url ?? ''] ?? 0) + 1;
    // Answers late: a fetch that missed its abort ends up with an image instead of an error.
    setTimeout(() => res.writeHead(200, { 'content-type': 'image/png' }).end(png), 2000);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('an abort right after the call', () => {
  it('stops runFfmpeg before it starts ffmpeg', async () => {
    for (let i = 0; i < 2; i++) {
      // the first call also loads ffmpeg's path; the second has it cached
      const dir = workDir();
      const controller = new AbortController();
      const t0 = Date.now();
      const running = runFfmpeg({
        args: [
          '-f',
          'lavfi',
          '-i',
          'testsrc2=size=1920x1080:rate=25:duration=60',
          '-c:v',
          'libx264',
          '-preset',
          'medium',
          path.join(dir, 'out.mp4'),
        ],
        workDir: dir,
        signal: controller.signal,
        timeLimitMs: 3000,
      });
      controller.abort();
      const err = await rejection(running);
      expect(err).toMatchObject({ code: 'RENDER_CANCELLED', retryable: false }); // not RENDER_TIMEOUT 3 s later
      expect(Date.now() - t0).toBeLessThan(30_000); // not the 60 s encode (the code says it was not the 3 s timeout)
      expect(processesMentioning(dir)).toEqual([]);
      expect(runningFfmpegCount()).toBe(0);
      expect(fs.existsSync(path.join(dir, 'out.mp4'))).toBe(false);
    }
  });

  it('stops fetchImage before it sends the request', async () => {
    const controller = new AbortController();
    const t0 = Date.now();
    const fetching = fetchImage(`${base}/late.png`, {
      workDir: workDir(),
      allowPrivate: true,
      signal: controller.signal,
      timeoutMs: 10_000,
    });
    controller.abort();
    const err = await rejection(fetching);
    expect(err).toMatchObject({ code: 'RENDER_CANCELLED', retryable: false });
    expect(Date.now() - t0).toBeLessThan(5_000); // not the fetch's 10 s timeout
    expect(hits['/late.png']).toBeUndefined();
  });

  it('passes on the abort reason the fetch was given', async () => {
    const controller = new AbortController();
    const fetching = fetchImage(`${base}/late-reason.png`, {
      workDir: workDir(),
      allowPrivate: true,
      signal: controller.signal,
    });
    controller.abort(new RenderError('RENDER_TIMEOUT', 'render deadline', true));
    expect(await rejection(fetching)).toMatchObject({ code: 'RENDER_TIMEOUT', retryable: true });
    expect(hits['/late-reason.png']).toBeUndefined();
  });
});
