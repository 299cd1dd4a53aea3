// The built-in renderers of the embedded default, keyed by the name a catalog's `backend.renderer` uses.
import type { ModelBackend } from '../types.ts';
import { createImageToVideo } from './image-to-video.ts';
import { createShotList } from './text-shot-list.ts';
import { createStartEndToVideo } from './start-end-to-video.ts';
import type { LocalFetchSettings } from './video-common.ts';

export function createLocalBackends(settings: LocalFetchSettings): Record<string, ModelBackend> {
  return {
    'image-to-video': createImageToVideo(settings),
    'start-end-to-video': createStartEndToVideo(settings),
    'shot-list': createShotList(),
  };
}
