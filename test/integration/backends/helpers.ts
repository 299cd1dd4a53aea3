// Helpers for the renderer tests: test pictures, a loopback server with scripted answers, ffprobe, frame
// extraction and picture comparison, and a check that no ffmpeg of a work directory is still running.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import type { RenderContext } from '../../../src/backends/types.ts';

const run = promisify(execFile);

/** A picture with structure (bands, a disc) in a given hue, so motion and blends are visible. */
export async function testPicture(
  width: number,
  height: number,
  hue: [number, number, number],
): Promise<Buffer> {
  const [r, g, b] = hue;
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const band = Math.floor((x + y) / Math.max(8, width / 16)) % 2 === 0 ? 1 : 0.55;
      const dx = x - width * 0.35,
        dy = y - height * 0.4;
      const disc = dx * dx + dy * dy < (Math.min(width, height) * 0.2) ** 2;
      raw[i] = disc ? 250 : Math.round(r * band);
      raw[i + 1] = disc ? 250 : Math.round(g * band);
      raw[i + 2] = disc ? 250 : Math.round(b * band);
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A loopback HTTP server whose routes are plain handlers; counts hits per path. */
export async function scriptedServer(routes: Record<string, Handler>, host = '127.0.0.1') {
  const hits: Record<string, number> = {};
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0];
    hits[p] = (hits[p] ?? 0) + 1;
    const handler = routes[p];
    if (handler) handler(req, res);
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    hits,
    url: (p: string) => `http://${host.includes(':') ? `[${host}]` : host}:${port}${p}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export const servePng =
  (png: Buffer): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
  };

export function makeWorkDir(prefix = 'rg-backend-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function context(workDir: string, over: Partial<RenderContext> = {}): RenderContext {
  return {
    signal: new AbortController().signal,
    progress: () => {},
    workDir,
    timeLimitSeconds: 120,
    attemptId: 'gen_test-1',
    readUpload: () => Promise.resolve(null),
    ...over,
  };
}

async function ffprobeBin(): Promise<string> {
  return (await import('@ffprobe-installer/ffprobe')).default.path;
}
async function ffmpegBin(): Promise<string> {
  return (await import('@ffmpeg-installer/ffmpeg')).default.path;
}

export interface Probe {
  format: { duration: string; tags?: Record<string, string> };
  streams: Array<{
    codec_type: string;
    codec_name: string;
    width?: number;
    height?: number;
    pix_fmt?: string;
    duration?: string;
    nb_frames?: string;
    r_frame_rate?: string;
    sample_rate?: string;
    channels?: number;
  }>;
}

export async function probe(file: string): Promise<Probe> {
  const { stdout } = await run(await ffprobeBin(), [
    '-v',
    'error',
    '-show_format',
    '-show_streams',
    '-of',
    'json',
    file,
  ]);
  return JSON.parse(stdout) as Probe;
}

export const THUMB = { width: 64, height: 36 };

/** Frame `n` of a video, scaled to a small RGB thumbnail. */
export async function frameThumb(file: string, n: number): Promise<Buffer> {
  const { stdout } = await run(
    await ffmpegBin(),
    [
      '-v',
      'error',
      '-i',
      file,
      '-vf',
      `select=eq(n\\,${n}),scale=${THUMB.width}:${THUMB.height}`,
      '-frames:v',
      '1',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      'pipe:1',
    ],
    { encoding: 'buffer', maxBuffer: 1 << 20 },
  );
  return stdout;
}

/** A still fitted into a frame the way the renderers fit it (cover), as a thumbnail. */
export async function stillThumb(png: Buffer): Promise<Buffer> {
  return sharp(png)
    .resize(THUMB.width, THUMB.height, { fit: 'fill' })
    .removeAlpha()
    .raw()
    .toBuffer();
}

/** Mean absolute difference of two RGB thumbnails, 0..1. */
export function difference(a: Buffer, b: Buffer): number {
  if (a.length !== b.length || a.length === 0)
    throw new Error(`thumbnails differ in size: ${a.length} vs ${b.length}`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
  return sum / (a.length * 255);
}

/** Processes whose command line mentions `needle` (e.g. a work directory), from /proc. */
export function processesMentioning(needle: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes(needle)) found.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

export function fileHash(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** For `.then(unexpected, …)`: a render or fetch that should have failed but succeeded. */
export function unexpected(): never {
  throw new Error('expected a failure, but it succeeded');
}
