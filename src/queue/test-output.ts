// The outputs of test renders (docs/api.md "Test keys"): made here, of the model's output type, without
// a backend. A video is a plain colour of the asked resolution and duration, encoded by the bundled
// ffmpeg at the cheapest settings; an image is a plain colour of the asked size; text begins "[test]".
// Files depend only on their type, size and duration, so each is encoded once and kept on disk while
// the process runs: a test render then costs a storage copy.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { ModelDef, ResolvedInputs } from '../domain/catalog.ts';
import { runFfmpeg } from '../backends/local/ffmpeg.ts';

const COLOUR = '0x4f6bd8';
const MAX_CACHED = 32;
const ENCODE_LIMIT_MS = 30_000;

export interface TestFile {
  path: string;
  contentType: string;
}

/** "720p" → 1280x720 (16:9), "1280x720" → itself; `width`/`height` inputs win; even numbers (yuv420p). */
export function testSize(inputs: ResolvedInputs, fallback: { width: number; height: number }) {
  let { width, height } = fallback;
  const res = typeof inputs.resolution === 'string' ? inputs.resolution.trim().toLowerCase() : '';
  const p = /^(\d{3,4})p$/.exec(res);
  const wxh = /^(\d{2,4})\s*[x×]\s*(\d{2,4})$/.exec(res);
  if (p) {
    height = Number(p[1]);
    width = Math.round((height * 16) / 9);
  }
  if (wxh) {
    width = Number(wxh[1]);
    height = Number(wxh[2]);
  }
  if (typeof inputs.width === 'number') width = inputs.width;
  if (typeof inputs.height === 'number') height = inputs.height;
  const even = (n: number) => Math.max(16, Math.min(4096, Math.round(n / 2) * 2));
  return { width: even(width), height: even(height) };
}

/** Seconds asked for by a `duration` input (a number, or an enum value like 5 or "5s"); 5 otherwise. */
export function testDuration(inputs: ResolvedInputs): number {
  const raw = inputs.duration;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number.parseFloat(raw) : NaN;
  return Number.isFinite(n) && n > 0 ? Math.min(n, 600) : 5;
}

/** The text answer of a test render of a text model. */
export function testText(def: ModelDef, inputs: ResolvedInputs): string {
  const given = [inputs.text, inputs.prompt].find((v): v is string => typeof v === 'string');
  const echo = given ? ` Input: ${given.slice(0, 200)}${given.length > 200 ? '…' : ''}` : '';
  return `[test] ${def.id} would answer here; nothing was rendered or charged.${echo}`;
}

/** What a test file depends on (its type, size and duration), and the id they make. */
function fileSpec(def: ModelDef, inputs: ResolvedInputs) {
  const contentType = def.output.type === 'file' ? def.output.contentType : 'text/plain';
  const size = testSize(
    inputs,
    def.kind === 'image' ? { width: 512, height: 512 } : { width: 1280, height: 720 },
  );
  const seconds = testDuration(inputs);
  return {
    contentType,
    size,
    seconds,
    id: `${contentType}|${size.width}x${size.height}|${seconds}`,
  };
}

export class TestOutputs {
  private dir: string | null = null;
  private files = new Map<string, Promise<TestFile>>();

  /** Files made, by what they depend on: read without waiting (`ready`). */
  private made = new Map<string, TestFile>();

  /** The file of a test render of `def` with `inputs` if it is made already; null otherwise. */
  ready(def: ModelDef, inputs: ResolvedInputs): TestFile | null {
    return this.made.get(fileSpec(def, inputs).id) ?? null;
  }

  /** The file of a test render of `def` with `inputs`: made once per type, size and duration. */
  file(def: ModelDef, inputs: ResolvedInputs): Promise<TestFile> {
    const { contentType, size, seconds, id } = fileSpec(def, inputs);
    let made = this.files.get(id);
    if (!made) {
      made = this.make(contentType, size, seconds);
      const mine = made;
      made.then(
        (f) => {
          if (this.files.get(id) === mine) this.made.set(id, f);
        },
        () => this.files.delete(id), // a failed encode is tried again next time
      );
      if (this.files.size >= MAX_CACHED) {
        const [oldest, file] = this.files.entries().next().value!;
        this.files.delete(oldest);
        this.made.delete(oldest);
        file.then(
          (f) => fs.promises.rm(f.path, { force: true }),
          () => undefined,
        );
      }
      this.files.set(id, made);
    }
    return made;
  }

  async close(): Promise<void> {
    if (this.dir) await fs.promises.rm(this.dir, { recursive: true, force: true });
    this.dir = null;
    this.files.clear();
    this.made.clear();
  }

  private async make(
    contentType: string,
    size: { width: number; height: number },
    seconds: number,
  ): Promise<TestFile> {
    this.dir ??= await fs.promises.mkdtemp(path.join(os.tmpdir(), 'rg-test-outputs-'));
    const base = path.join(
      this.dir,
      `${this.files.size}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    );
    const [kind, sub] = contentType.split('/');
    if (kind === 'image') {
      const format =
        (['png', 'jpeg', 'webp', 'avif', 'gif', 'tiff'] as const).find((f) => f === sub) ?? 'png';
      const out = `${base}.${format}`;
      await sharp({
        create: { width: size.width, height: size.height, channels: 3, background: '#4f6bd8' },
      })
        .toFormat(format)
        .toFile(out);
      return { path: out, contentType };
    }
    if (kind === 'video' || kind === 'audio') {
      const out = `${base}.${sub === 'webm' ? 'webm' : kind === 'audio' ? 'm4a' : 'mp4'}`;
      await runFfmpeg({
        args: encodeArgs(kind, sub, size, seconds, out),
        workDir: this.dir,
        signal: new AbortController().signal,
        timeLimitMs: ENCODE_LIMIT_MS,
      });
      return { path: out, contentType };
    }
    // Any other file type: a few bytes saying what it is.
    const out = `${base}.bin`;
    await fs.promises.writeFile(out, `[test] a ${contentType} output would be here\n`);
    return { path: out, contentType };
  }
}

function encodeArgs(
  kind: string,
  sub: string,
  size: { width: number; height: number },
  seconds: number,
  out: string,
) {
  const d = String(seconds);
  if (kind === 'audio') {
    return [
      '-f',
      'lavfi',
      '-i',
      `anullsrc=r=22050:cl=mono:d=${d}`,
      '-c:a',
      'aac',
      '-b:a',
      '32k',
      out,
    ];
  }
  const src = ['-f', 'lavfi', '-i', `color=c=${COLOUR}:s=${size.width}x${size.height}:r=5:d=${d}`];
  if (sub === 'webm')
    return [
      ...src,
      '-c:v',
      'libvpx',
      '-deadline',
      'realtime',
      '-cpu-used',
      '8',
      '-b:v',
      '100k',
      out,
    ];
  return [
    ...src,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-tune',
    'stillimage',
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    out,
  ];
}
