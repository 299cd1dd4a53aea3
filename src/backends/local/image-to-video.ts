// rendergate/image-to-video (seed model B): a camera move over one still, as a 1280×720 H.264 MP4 of
// exactly `duration` seconds. The move follows camera words in the prompt and its strength follows
// guidance_scale; prompt and negative prompt are written into the file's metadata.
import { join } from 'node:path';
import type { ModelBackend, RenderContext, RenderOutput } from '../types.ts';
import type { ResolvedInputs } from '../../domain/catalog.ts';
import { renderDeadline } from './abort.ts';
import { perspectiveFilter } from './camera.ts';
import { frameImage } from './frame.ts';
import { planStillMove, stillMovePath } from './motion-plan.ts';
import {
  FPS,
  TO_YUV,
  encodeMp4,
  fetchInputImage,
  h264OutputArgs,
  numberInput,
  progressSlice,
  textInput,
  urlInputs,
  type LocalFetchSettings,
} from './video-common.ts';

const FRAME = { width: 1280, height: 720 };

export function createImageToVideo(settings: LocalFetchSettings): ModelBackend {
  return {
    run: (inputs, ctx) => renderImageToVideo(inputs, ctx, settings),
    inputUrls: (inputs) => urlInputs(inputs, ['image']),
  };
}

async function renderImageToVideo(
  inputs: ResolvedInputs,
  ctx: RenderContext,
  settings: LocalFetchSettings,
): Promise<RenderOutput> {
  const prompt = textInput(inputs, 'prompt', true);
  const image = textInput(inputs, 'image', true);
  const negative = textInput(inputs, 'negative_prompt', false);
  const guidance = numberInput(inputs, 'guidance_scale', 0.5, 0, 1);
  const duration = numberInput(inputs, 'duration', 5, 1, 60);
  const frames = Math.round(duration * FPS);
  const progress = progressSlice(ctx.progress);
  const limit = renderDeadline(ctx.signal, ctx.timeLimitSeconds);
  try {
    progress.at(0);
    const fetched = await fetchInputImage(
      image,
      settings,
      ctx.workDir,
      limit.signal,
      ctx.readUpload,
    );
    progress.at(0.1);
    const still = join(ctx.workDir, 'still.png');
    await frameImage(fetched.path, still, FRAME);
    progress.at(0.15);

    const path = stillMovePath(planStillMove(prompt, negative, guidance));
    const output = join(ctx.workDir, 'image-to-video.mp4');
    const graph = [
      `[0:v]${TO_YUV},loop=loop=${frames - 1}:size=1:start=0,setpts=N/${FPS}/TB,`,
      `${perspectiveFilter(path, frames)}[v]`,
    ].join('');
    return await encodeMp4(
      [
        '-i',
        still,
        '-filter_complex',
        graph,
        '-map',
        '[v]',
        '-frames:v',
        String(frames),
        ...h264OutputArgs({
          title: prompt,
          comment: negative ? `negative prompt: ${negative}` : undefined,
        }),
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
