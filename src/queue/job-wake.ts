// Waking the workers after a create. This process's own worker, when it has one (role `serve`), is
// woken in-process at once: a NOTIFY would first go to the database and come back on the worker's
// LISTEN connection, a round trip between the create's commit and its claim. Every other worker is
// woken by the NOTIFY (notify-after-commit.ts), which carries this process's tag so that its own
// worker, already woken, does not claim a second time for it.
//
// The NOTIFY waits for the local worker's answer: when it claimed the job itself, nobody else has
// anything to claim for it, and the NOTIFY is not sent. Sent, it would cost a commit with a WAL
// flush and wake every listening connection of the database, on the chat fronts' path between the
// charge and the backend (docs/performance.md "The chat fronts' added latency"). A job the local
// worker did not take (busy, at a limit, another job first) is announced once its claim round has
// ended, a claim's time later than before; a wake lost to a crash meanwhile costs a poll, as ever.
import crypto from 'node:crypto';
import { JOBS_CHANNEL } from '../db/channels.ts';
import { AfterCommitNotifier } from '../db/notify-after-commit.ts';
import type { Db } from '../db/pool.ts';

/** A job a create of this process queued. */
export interface QueuedJob {
  id: string;
  modelId: string;
}

/**
 * This process's worker, woken with the job a create queued: true once it has claimed that job
 * itself (nothing then to announce), false when it has not (or nothing: it cannot say).
 */
export type LocalFill = (job?: QueuedJob) => Promise<boolean> | void;

export class JobWake extends AfterCommitNotifier {
  /** The payload of this process's notifications. */
  readonly tag = `created:${crypto.randomBytes(8).toString('hex')}`;
  private local: LocalFill | null = null;
  /** Notifications left out because the local worker claimed the job (tests read it). */
  skipped = 0;

  constructor(db: Db) {
    super(db, JOBS_CHANNEL);
  }

  /**
   * This process's worker: woken by each create of this process, in-process, and told which job it
   * queued (the worker may claim that one directly: claim.ts claimAlone).
   */
  attach(fill: LocalFill): void {
    this.local = fill;
  }

  /**
   * A job was committed (`job`, when one): this process's worker now, every other one by NOTIFY
   * unless this process's worker claimed the job.
   */
  override send(_payload?: string, job?: QueuedJob): void {
    const claimed = this.local?.(job);
    if (!job || !claimed) {
      super.send(this.tag);
      return;
    }
    claimed.then(
      (took) => {
        if (took) this.skipped++;
        else super.send(this.tag);
      },
      () => super.send(this.tag),
    );
  }

  /** A notification this process sent, whose job its worker was already told of. */
  isOwn(payload: string): boolean {
    return this.local !== null && payload === this.tag;
  }
}

/**
 * The worker's side: the jobs its process's creates queued, each waiting to hear whether a claim of
 * this worker took it.
 */
export class WakeAnswers {
  private waiting = new Map<string, (claimed: boolean) => void>();

  /** Job `id` was queued here; answered by claimed() or settle(). */
  wait(id: string): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      this.waiting.get(id)?.(false);
      this.waiting.set(id, resolve);
    });
  }

  /** A claim of this worker took job `id`. */
  claimed(id: string): void {
    const tell = this.waiting.get(id);
    if (!tell) return;
    this.waiting.delete(id);
    tell(true);
  }

  /** The claim round is over: every job still waiting was not taken here. */
  settle(): void {
    for (const tell of this.waiting.values()) tell(false);
    this.waiting.clear();
  }
}
