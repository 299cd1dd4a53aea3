// The scratch directory of one render attempt (queue/worker.ts).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * A render's private scratch directory, made on first use: text renderers never touch theirs, and
 * on a journalling file system making and removing a directory costs about a quarter of a
 * millisecond, as much as the claim. Made synchronously because the backend reads it as a plain
 * property (RenderContext.workDir); the name carries the render's id, to find its processes by.
 */
export class ScratchDir {
  private dir: string | null = null;
  private removed = false;

  constructor(
    private parent: string,
    private generationId: string,
  ) {}

  path(): string {
    // A backend abandoned past its time limit must not make a directory that nobody would remove.
    if (this.removed && !this.dir) {
      throw new Error('the render is over; its scratch directory is gone');
    }
    this.dir ??= fs.mkdtempSync(path.join(this.parent, `rendergate-${this.generationId}-`));
    return this.dir;
  }

  /**
   * Removes the directory, if it was made: one rmdir when the render left it empty, else the
   * recursive walk.
   */
  async remove(): Promise<void> {
    this.removed = true;
    if (!this.dir) return;
    await fsp
      .rmdir(this.dir)
      .catch(() => fsp.rm(this.dir!, { recursive: true, force: true }))
      .catch(() => undefined);
  }
}
