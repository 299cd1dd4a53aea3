// What the built-in video renderers share: reading their inputs, fetching input images under the render's
// deadline, and the encoder settings that make an MP4 reproducible byte for byte.
import type { ResolvedInputs } from '../../domain/catalog.ts';
import { RenderError, type RenderContext, type RenderOutput } from '../types.ts';
import type { Deadline } from './abort.ts';
import { runFfmpeg } from './ffmpeg.ts';
import {
  fetchImage,
  imageFromBytes,
  type FetchedImage,
  type FetchImageOptions,
} from './fetch-image.ts';

export const FPS = 25;

/** How the local renderers fetch input images (from the server's configuration). */
export interface LocalFetchSettings {
  allowPrivateUrls: boolean;
  maxInputBytes?: number;
  fetchTimeoutMs?: number;
  /** Test seams, passed through to the fetcher. */
  policy?: FetchImageOptions['policy'];
  resolve?: FetchImageOptions['resolve'];
}

/** The string inputs among `names`, in that order: the addresses a renderer fetches (inputUrls). */
export function urlInputs(inputs: ResolvedInputs, names: readonly string[]): string[] {
  return names.map((n) => inputs[n]).filter((v): v is string => typeof v === 'string');
}

/** An input image: an upload of the render's account read from storage (ctx.readUpload), else fetched under the address guard. */
export async function fetchInputImage(
  url: string,
  settings: LocalFetchSettings,
  workDir: string,
  signal: AbortSignal,
  readUpload?: RenderContext['readUpload'],
): Promise<FetchedImage> {
  const upload = readUpload ? await readUpload(url) : null;
  if (upload) return imageFromBytes(upload.bytes, 'the uploaded image', { workDir });
  return fetchImage(url, {
    workDir,
    signal,
    allowPrivate: settings.allowPrivateUrls,
    maxBytes: settings.maxInputBytes,
    timeoutMs: settings.fetchTimeoutMs,
    policy: settings.policy,
    resolve: settings.resolve,
  });
}

function badInput(name: string, problem: string): RenderError {
  return new RenderError('RENDER_INPUT_INVALID', `Input ${name} ${problem}.`, false);
}

export function textInput(inputs: ResolvedInputs, name: string, required: true): string;
export function textInput(
  inputs: ResolvedInputs,
  name: string,
  required: false,
): string | undefined;
export function textInput(
  inputs: ResolvedInputs,
  name: string,
  required: boolean,
): string | undefined {
  const v = inputs[name];
  if (v === undefined || v === null) {
    if (required) throw badInput(name, 'is missing');
    return undefined;
  }
  if (typeof v !== 'string') throw badInput(name, 'must be a string');
  return v;
}

export function numberInput(
  inputs: ResolvedInputs,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const v = inputs[name] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw badInput(name, 'must be a number');
  if (v < min || v > max) throw badInput(name, `must be between ${min} and ${max}`);
  return v;
}

export function enumInput<T extends string>(
  inputs: ResolvedInputs,
  name: string,
  fallback: T,
  values: readonly T[],
): T {
  const v = inputs[name] ?? fallback;
  if (typeof v !== 'string' || !values.includes(v as T))
    throw badInput(name, `must be one of ${values.join(', ')}`);
  return v as T;
}

export function toggleInput(inputs: ResolvedInputs, name: string, fallback: boolean): boolean {
  const v = inputs[name] ?? fallback;
  if (typeof v !== 'boolean') throw badInput(name, 'must be true or false');
  return v;
}

/** RGB still → BT.709 limited-range 4:2:0, the colour space the output is tagged with. */
export const TO_YUV = 'scale=out_color_matrix=bt709:out_range=tv,format=yuv420p';

/**
 * H.264 output settings. Reproducible: bitexact muxing and encoding (no library versions or times in the
 * file), a fixed thread count (x264 output depends on it, not on the machine), and no metadata copied from the inputs; only the tags given are written.
 */
export function h264OutputArgs(tags: Record<string, string | undefined>): string[] {
  const args = [
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '20',
    '-profile:v',
    'high',
    '-pix_fmt',
    'yuv420p',
    '-threads',
    '4',
    '-r',
    String(FPS),
    '-color_primaries',
    'bt709',
    '-color_trc',
    'bt709',
    '-colorspace',
    'bt709',
    '-color_range',
    'tv',
    '-flags:v',
    '+bitexact',
    '-fflags',
    '+bitexact',
    '-map_metadata',
    '-1',
    '-map_chapters',
    '-1',
    '-movflags',
    '+faststart',
  ];
  for (const [key, value] of Object.entries(tags))
    if (value) args.push('-metadata', `${key}=${value}`);
  return args;
}

/** Maps sub-task progress (0..1) into a slice [from, to] of the render's overall progress, never backwards. */
export function progressSlice(report: (f: number) => void) {
  let last = 0;
  const emit = (f: number) => {
    const v = Math.min(1, Math.max(last, f));
    if (v > last || f === 0) {
      last = v;
      report(v);
    }
  };
  return {
    at: emit,
    slice: (from: number, to: number) => (f: number) => emit(from + (to - from) * f),
  };
}

/** The last step of a video render: the encode to `output` under the render's deadline, as its final 85 %. */
export async function encodeMp4(
  args: string[],
  output: string,
  seconds: number,
  ctx: RenderContext,
  limit: Deadline,
  progress: ReturnType<typeof progressSlice>,
): Promise<RenderOutput> {
  await runFfmpeg({
    args: [...args, output],
    workDir: ctx.workDir,
    signal: limit.signal,
    timeLimitMs: limit.remainingMs(),
    outputSeconds: seconds,
    onProgress: progress.slice(0.15, 1),
  });
  progress.at(1);
  return { kind: 'file', path: output, contentType: 'video/mp4' };
}
