// Waking the workers after a create. This process's own worker, when it has one (role `serve`), is
// woken in-process at once: a NOTIFY would first go to the database and come back on the worker's
// LISTEN connection, a round trip between the create's commit and its claim. Every other worker is
// woken by the NOTIFY (notify-after-commit.ts), which carries this process's tag so that its own
// worker, already woken, does not claim a second time for it.
import crypto from 'node:crypto';
import { JOBS_CHANNEL } from '../db/channels.ts';
import { AfterCommitNotifier } from '../db/notify-after-commit.ts';
import type { Db } from '../db/pool.ts';

/** A job a create of this process queued. */
export interface QueuedJob {
  id: string;
  modelId: string;
}

export class JobWake extends AfterCommitNotifier {
  /** The payload of this process's notifications. */
  readonly tag = `created:${crypto.randomBytes(8).toString('hex')}`;
  private local: ((job?: QueuedJob) => void) | null = null;

  constructor(db: Db) {
    super(db, JOBS_CHANNEL);
  }

  /**
   * This process's worker: woken by each create of this process, in-process, and told which job it
   * queued (the worker may claim that one directly: claim.ts claimAlone).
   */
  attach(fill: (job?: QueuedJob) => void): void {
    this.local = fill;
  }

  /** A job was committed (`job`, when one): this process's worker now, every other one by NOTIFY. */
  override send(_payload?: string, job?: QueuedJob): void {
    this.local?.(job);
    super.send(this.tag);
  }

  /** A notification this process sent, whose job its worker was already told of. */
  isOwn(payload: string): boolean {
    return this.local !== null && payload === this.tag;
  }
}
