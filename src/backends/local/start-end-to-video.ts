// rendergate/start-end-to-video (seed model A): a transition from `image` to `last_image` over exactly
// `duration` seconds at `resolution`: a cross-fade (overlay of the last frame fading in: this ffmpeg has
// no xfade) under one camera move that starts and ends at rest, so the first frame is `image` and the
// last `last_image`. movement_amplitude sets the move's strength (`auto`: from how different the images
// are), `seed` its path (absent: derived from the inputs), and `bgm` adds a generated music bed.
import fs from 'node:fs/promises';
import { join } from 'node:path';
import type { ResolvedInputs } from '../../domain/catalog.ts';
import type { ModelBackend, RenderContext, RenderOutput } from '../types.ts';
import { renderDeadline } from './abort.ts';
import { perspectiveFilter } from './camera.ts';
import { frameImage, imageDifference } from './frame.ts';
import { autoAmplitude, hash31, planTransition, type Amplitude } from './motion-plan.ts';
import { musicBedWav } from './music.ts';
import {
  FPS,
  TO_YUV,
  encodeMp4,
  enumInput,
  fetchInputImage,
  h264OutputArgs,
  numberInput,
  progressSlice,
  textInput,
  toggleInput,
  urlInputs,
  type LocalFetchSettings,
} from './video-common.ts';

const SIZES = {
  '540p': { width: 960, height: 540 },
  '720p': { width: 1280, height: 720 },
  '1080p': { width: 1920, height: 1080 },
} as const;

export function createStartEndToVideo(settings: LocalFetchSettings): ModelBackend {
  // Both images are fetched at once: when both are refused, the first one's refusal is the render's.
  return {
    run: (inputs, ctx) => renderTransition(inputs, ctx, settings),
    inputUrls: (inputs) => urlInputs(inputs, ['image', 'last_image']),
  };
}

/** The seed of the motion path: the client's, or one derived from everything else it asked for. */
export function transitionSeed(inputs: ResolvedInputs): number {
  if (typeof inputs.seed === 'number') return inputs.seed;
  const { seed: _omit, ...rest } = inputs;
  return hash31(
    'start-end-to-video',
    JSON.stringify(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b))),
  );
}

async function renderTransition(
  inputs: ResolvedInputs,
  ctx: RenderContext,
  settings: LocalFetchSettings,
): Promise<RenderOutput> {
  const prompt = textInput(inputs, 'prompt', true);
  const duration = numberInput(inputs, 'duration', 5, 1, 10);
  const frame = SIZES[enumInput(inputs, 'resolution', '720p', ['540p', '720p', '1080p'] as const)];
  const bgm = toggleInput(inputs, 'bgm', true);
  const requested = enumInput(inputs, 'movement_amplitude', 'auto', [
    'auto',
    'small',
    'medium',
    'large',
  ] as const);
  const seed = transitionSeed(inputs);
  const frames = Math.round(duration * FPS);
  const progress = progressSlice(ctx.progress);
  const limit = renderDeadline(ctx.signal, ctx.timeLimitSeconds);
  try {
    progress.at(0);
    // Both at once; the first failure aborts the other fetch instead of leaving it running.
    const both = new AbortController();
    const forward = () => both.abort(limit.signal.reason);
    limit.signal.addEventListener('abort', forward, { once: true });
    const fetchOne = (name: string) =>
      fetchInputImage(
        textInput(inputs, name, true),
        settings,
        ctx.workDir,
        both.signal,
        ctx.readUpload,
      ).catch((err: unknown) => {
        both.abort(err);
        throw err;
      });
    const [first, last] = await Promise.all([fetchOne('image'), fetchOne('last_image')]).finally(
      () => limit.signal.removeEventListener('abort', forward),
    );
    progress.at(0.1);
    const a = join(ctx.workDir, 'first.png');
    const b = join(ctx.workDir, 'last.png');
    await Promise.all([frameImage(first.path, a, frame), frameImage(last.path, b, frame)]);
    const amplitude: Amplitude =
      requested === 'auto' ? autoAmplitude(await imageDifference(a, b)) : requested;
    const plan = planTransition(amplitude, seed);
    progress.at(0.15);

    const audioArgs: string[] = [];
    if (bgm) {
      const wav = join(ctx.workDir, 'music.wav');
      await fs.writeFile(wav, musicBedWav({ durationSeconds: duration, seed }));
      audioArgs.push('-i', wav);
    }
    const hold = `loop=loop=${frames - 1}:size=1:start=0,setpts=N/${FPS}/TB`;
    const fadeStart = (plan.blendStart * duration).toFixed(4);
    const fadeLength = (plan.blendLength * duration).toFixed(4);
    const graph = [
      `[0:v]${TO_YUV},${hold}[a]`,
      `[1:v]scale=out_color_matrix=bt709:out_range=tv,format=yuva420p,${hold},fade=t=in:st=${fadeStart}:d=${fadeLength}:alpha=1[b]`,
      `[a][b]overlay=format=yuv420:eof_action=endall,${perspectiveFilter(plan.path, frames)},format=yuv420p[v]`,
    ].join(';');
    const output = join(ctx.workDir, 'start-end-to-video.mp4');
    return await encodeMp4(
      [
        '-i',
        a,
        '-i',
        b,
        ...audioArgs,
        // No -frames:v: reaching it would close the whole file and cut the audio short. The loop yields
        // exactly `frames` frames and -t bounds both streams.
        '-filter_complex',
        graph,
        '-map',
        '[v]',
        '-t',
        String(frames / FPS),
        ...(bgm
          ? ['-map', '2:a', '-c:a', 'aac', '-b:a', '128k', '-ar', '44100', '-flags:a', '+bitexact']
          : ['-an']),
        ...h264OutputArgs({ title: prompt, comment: `seed ${seed}, movement ${amplitude}` }),
      ],
      output,
      duration,
      ctx,
      limit,
      progress,
    );
  } finally {
    limit.dispose();
  }
}
