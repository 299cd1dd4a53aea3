// A render's progress, persisted for polls (Generation.progress): at most one write every PROGRESS_EVERY_MS
// per render, only while this worker still holds that attempt (lease owner, attempt number, queued), so
// a late report of an earlier attempt can never overwrite a later one or a final status. Written on the
// claims' pool (asynchronous commit): progress is advisory, and its change notification (the trigger of
// migrations/008) then holds the commit-order lock only briefly.
import type { Db } from '../db/pool.ts';
import type { Lease } from '../db/lease.ts';
import { writeProgress } from '../db/generations-attempt.ts';

const PROGRESS_EVERY_MS = 500;

export class ProgressWriter {
  private last = -1;
  private wanted = -1;
  private writtenAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private writing = false;
  private stopped = false;

  constructor(
    private db: Db,
    private id: string,
    private lease: Lease,
  ) {}

  report = (fraction: number): void => {
    if (this.stopped || !Number.isFinite(fraction)) return;
    this.wanted = Math.round(Math.min(1, Math.max(0, fraction)) * 1000) / 1000;
    this.schedule();
  };

  private schedule() {
    if (this.timer || this.writing || this.wanted === this.last) return;
    const wait = this.writtenAt + PROGRESS_EVERY_MS - performance.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.schedule();
      }, wait);
      return;
    }
    this.write();
  }

  private write() {
    const value = this.wanted;
    this.writing = true;
    this.writtenAt = performance.now();
    writeProgress(this.db, this.id, this.lease, value)
      .then(
        () => {
          this.last = value;
        },
        () => {
          /* progress is advisory: a lost write is replaced by the next */
        },
      )
      .finally(() => {
        this.writing = false;
        if (!this.stopped) this.schedule();
      });
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
