// A still of each stored video, for the studio's History (its rows show this instead of a player):
// the bundled ffmpeg takes a frame near the start, scaled to 480 px wide, as a JPEG stored beside
// the output under `posters/` (storage/output-keys.ts posterKey). A poster is a nicety: when it can
// not be made (no ffmpeg, a stream it cannot read) the render still succeeds, and the studio shows
// a placeholder. The orphan sweep (orphans.ts) removes a poster once no row names its output.
import fsp from 'node:fs/promises';
import type { Logger } from 'pino';
import { runFfmpeg } from '../backends/local/ffmpeg.ts';
import { posterKey } from '../storage/output-keys.ts';
import type { Storage } from '../storage/storage.ts';
import path from 'node:path';

/** A still takes well under a second; a stream that makes ffmpeg hang is given up after this. */
const POSTER_TIME_LIMIT_MS = 15_000;
/** Wide enough for a History row at twice the pixel density of the row's 240 px thumbnail. */
const POSTER_WIDTH = 480;

/** Stores the poster of the video at `file` (the output stored at `outputKey`); never throws. */
export async function storePoster(
  storage: Storage,
  log: Logger,
  outputKey: string,
  file: string,
): Promise<void> {
  const still = `${file}.poster.jpg`;
  try {
    await runFfmpeg({
      // The frame at 0.5 s (the very first is often black or a fade), else the first one there is.
      args: [
        ...['-ss', '0.5', '-i', file, '-frames:v', '1', '-update', '1'],
        ...['-vf', `scale=${POSTER_WIDTH}:-2`, '-q:v', '4', still],
      ],
      workDir: path.dirname(file),
      signal: AbortSignal.timeout(POSTER_TIME_LIMIT_MS + 1000),
      timeLimitMs: POSTER_TIME_LIMIT_MS,
    });
    const made = await fsp.stat(still).catch(() => null);
    if (!made || made.size === 0) {
      // A video shorter than half a second: its first frame.
      await runFfmpeg({
        args: ['-i', file, '-frames:v', '1', '-vf', `scale=${POSTER_WIDTH}:-2`, still],
        workDir: path.dirname(file),
        signal: AbortSignal.timeout(POSTER_TIME_LIMIT_MS + 1000),
        timeLimitMs: POSTER_TIME_LIMIT_MS,
      });
    }
    await storage.put(posterKey(outputKey), still, 'image/jpeg');
  } catch (e) {
    log.warn(
      { err: e, key: outputKey },
      'could not make the poster of a video; History shows none',
    );
  } finally {
    await fsp.rm(still, { force: true });
  }
}
