// The still of a stored video (queue/poster.ts stored it under output-keys.ts posterKey), or null
// when there is none: a file that is not a video, a video whose still could not be made, or one
// stored before stills were taken.
import type { Readable } from 'node:stream';
import { posterKey } from '../storage/output-keys.ts';
import type { Storage } from '../storage/storage.ts';

export async function readPoster(
  storage: Storage,
  c: { key: string; contentType: string },
): Promise<Readable | null> {
  if (!c.contentType.startsWith('video/')) return null;
  try {
    return await storage.read(posterKey(c.key));
  } catch {
    return null; // none was stored
  }
}
