// The render worker. A queued generation is its own job: a worker claims it with SKIP LOCKED and
// holds a lease it renews while rendering. A worker that dies stops renewing, the lease lapses
// within LEASE_SECONDS, and any worker claims the job again (attempts counts claims, so a render
// that keeps crashing its worker ends failed and refunded); claim.ts picks which job, fairly, and
// attempt.ts runs each claimed attempt. Every write for an attempt is guarded by its fencing token
// (db/lease.ts: the owner and the attempt number of its claim) and each attempt stores its output
// under its own key, so a late, stalled or duplicate attempt can never move money, resurrect a
// generation, or touch the file of the attempt that won.
import os from 'node:os';
import crypto from 'node:crypto';
import {
  CANCEL_CHANNEL,
  GENERATION_CHANGED_CHANNEL,
  JOBS_CHANNEL,
  notify,
} from '../db/channels.ts';
import { AfterCommitNotifier } from '../db/notify-after-commit.ts';
import { Listener } from '../db/listener.ts';
import { Claimer } from './claim.ts';
import { AttemptOutcome } from './outcome.ts';
import {
  attemptKey,
  cancelAttempt,
  runAttempt,
  type AttemptDeps,
  type Running,
} from './attempt.ts';
import type { ClaimedJob } from './types.ts';
import { handBackAtShutdown } from '../db/generations-attempt.ts';
import { WakeAnswers, type QueuedJob } from './job-wake.ts';
import { recordSpan } from '../tracing/trace.ts';
import { spanAttributes } from './spans.ts';

import type { WorkerOptions } from './worker-options.ts';

export type { WorkerOptions };

export const LEASE_SECONDS = 15;
const POLL_MS = 1_000;

export class Worker {
  readonly owner = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  /**
   * Renders in progress, by attempt (`<generation id>-<attempt>`): two attempts of one render never
   * share an entry.
   */
  private running = new Map<string, Running>();
  private listener: Listener;
  private pollTimer: NodeJS.Timeout | null = null;
  /**
   * The claim loop in progress, if any (stop() waits for it, so that no claimed job is left
   * behind).
   */
  private filling: Promise<void> | null = null;
  /** Claims made (the tests read it). */
  claims = 0;
  /** Renders running in this process per account, and the models whose claims are limited. */
  private perAccount = new Map<string, number>();
  private limitedModels: Set<string>;
  private fillAgain = false;
  private queuedHere: QueuedJob | null = null; // claimed alone if it is (claim.ts claimAlone)
  /** Jobs this process queued: job-wake.ts announces only those this worker did not claim. */
  private wakes = new WakeAnswers();
  private stopping = false;
  private idle: Array<() => void> = [];

  private claimer: Claimer;
  private attempt: AttemptDeps;
  /**
   * Claims change a generation's startedAt; API caches hear of it from here, after the claim's
   * commit.
   */
  private startedNotifier: AfterCommitNotifier;

  constructor(private o: WorkerOptions) {
    const limited = o.catalog.models.filter((m) => m.concurrency);
    const limits = new Map(limited.map((m) => [m.id, m.concurrency!]));
    this.limitedModels = new Set([...limits.keys(), ...(o.pools?.keys() ?? [])]);
    this.claimer = new Claimer({
      db: o.claimDb,
      limits,
      owner: this.owner,
      leaseSeconds: LEASE_SECONDS,
      accountLimit: o.accountConcurrency > 0 ? o.accountConcurrency : null,
      pools: o.pools,
    });
    this.attempt = {
      ...o,
      outcome: new AttemptOutcome(o),
      leaseSeconds: LEASE_SECONDS,
      tmpDir: os.tmpdir(), // read once: os.tmpdir() consults the environment on every call
    };
    this.startedNotifier = new AfterCommitNotifier(o.claimDb, GENERATION_CHANGED_CHANNEL);
    this.listener = new Listener(
      o.databaseUrl,
      [JOBS_CHANNEL, CANCEL_CHANNEL],
      (ch, payload) => {
        // A create of this process woke its worker in-process already (job-wake.ts).
        if (ch === JOBS_CHANNEL) {
          if (!o.jobWake?.isOwn(payload)) this.fill();
        } else this.cancelGeneration(payload);
      },
      () => this.fill(),
      (m) => o.log.warn(m),
    );
  }

  async start(): Promise<void> {
    await this.listener.start();
    this.o.jobWake?.attach((job) => this.fillFor(job));
    this.pollTimer = setInterval(() => this.fill(), POLL_MS);
    this.fill();
  }

  /**
   * fill() for a job this process queued: true once a claim of this worker has taken it, false
   * when the claim round ended without it (or none could run).
   */
  private fillFor(job?: QueuedJob): Promise<boolean> | void {
    if (!job) return this.fill();
    if (this.stopping) return Promise.resolve(false);
    const told = this.wakes.wait(job.id);
    this.fill(job);
    return told;
  }

  /** Claims jobs until every slot is busy or nothing is runnable; `job`: one this process queued. */
  fill(job?: QueuedJob): void {
    if (this.stopping) return;
    if (job) this.queuedHere = job; // re-entrant calls coalesce: the latest one is tried alone
    if (this.filling) {
      this.fillAgain = true;
      return;
    }
    // Cleared in a callback, which always runs after this assignment, even when fillSlots had
    // nothing to do.
    this.filling = this.fillSlots().finally(() => {
      this.filling = null;
      // A fill() asked for after the loop's last look (its job not yet tried): one more round.
      if (this.fillAgain) this.fill();
    });
  }

  private async fillSlots(): Promise<void> {
    try {
      do {
        this.fillAgain = false;
        while (!this.stopping && this.running.size < this.o.concurrency) {
          // A stalled event loop (a renderer blocking it): take nothing more until it has run
          // freely for a while; the poll timer tries again. Renders already running go on.
          if (this.o.metrics.eventLoop.stalledNow()) {
            this.o.metrics.claimsSkippedStalled.inc();
            break;
          }
          // Every free slot in one claim: one round trip however many jobs a burst queued.
          const free = this.o.concurrency - this.running.size;
          const here = this.queuedHere;
          this.queuedHere = null;
          const jobs = await this.claim(free, here);
          for (const job of jobs) void this.run(job);
          // Fewer than asked for: nothing else was runnable as this claim saw the queue. A job
          // committed since then sends a NOTIFY, and that fill() call makes this loop go round
          // again.
          if (jobs.length < free) break;
        }
      } while (this.fillAgain && !this.stopping);
    } catch (e) {
      this.o.log.warn({ err: e }, 'claiming a job failed');
    }
    // Whatever the loop did not take is for the other workers to hear of.
    this.wakes.settle();
  }

  private async claim(slots: number, queuedHere: QueuedJob | null): Promise<ClaimedJob[]> {
    this.claims++;
    const start = Date.now();
    const jobs = await this.claimer.claim(slots, queuedHere);
    const end = Date.now();
    for (const job of jobs) {
      // The claim's span, in the create's trace: the row that names the parent is known only now.
      if (job.trace_parent) {
        recordSpan('generation.claim', {
          parent: job.trace_parent,
          start,
          end,
          attributes: spanAttributes(job),
        });
      }
      this.o.metrics.queueWait.observe({ model: job.model_id }, Math.max(0, job.waited));
      this.startedNotifier.send(job.id); // its startedAt is set: cached polls must drop it
      this.wakes.claimed(job.id);
    }
    return jobs;
  }

  /** Stops every attempt of a generation running here (cancelled or deleted by its owner). */
  private cancelGeneration(id: string) {
    for (const r of this.running.values()) if (r.job.id === id) cancelAttempt(r);
  }

  private async run(job: ClaimedJob): Promise<void> {
    const state: Running = { job, abort: new AbortController(), reason: null };
    const key = attemptKey(job);
    this.running.set(key, state);
    this.perAccount.set(job.account_id, (this.perAccount.get(job.account_id) ?? 0) + 1);
    await runAttempt(this.attempt, state, () => {
      const bound = this.heldBack(job);
      this.running.delete(key);
      const n = this.perAccount.get(job.account_id)! - 1;
      if (n > 0) this.perAccount.set(job.account_id, n);
      else this.perAccount.delete(job.account_id);
      // The next job's claim need not wait for this one's clean-up, but goes after what its
      // outcome set off in this process (a chat answer written, in microtasks): not before it.
      if (bound) setImmediate(() => this.fill());
    });
    if (this.running.size === 0) this.idle.splice(0).forEach((f) => f());
  }

  /**
   * Whether the end of `job` makes room a claim could not have had (all slots busy, a limited model,
   * its account at its limit here): only then does it claim again. Else the last claim took every
   * runnable job, and one queued since wakes the worker (job-wake.ts). Retries (due seconds later)
   * and limits held by other workers' renders are found by the poll (POLL_MS).
   */
  private heldBack(job: ClaimedJob): boolean {
    const limit = this.o.accountConcurrency;
    return (
      this.running.size >= this.o.concurrency ||
      this.limitedModels.has(job.model_id) ||
      (limit > 0 && (this.perAccount.get(job.account_id) ?? 0) >= limit)
    );
  }

  /** Render attempts in progress in this process (tests and reports). */
  get attemptsRunning(): number {
    return this.running.size;
  }

  /**
   * Stops claiming; waits up to `graceMs` for running renders, then hands the rest back to the
   * queue.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    // a claim in flight: its jobs are running (or handed back below) like the rest
    await this.filling;
    this.wakes.settle();
    if (this.running.size > 0) {
      await Promise.race([
        new Promise<void>((r) => this.idle.push(r)),
        new Promise((r) => setTimeout(r, graceMs)),
      ]);
    }
    const left = [...this.running.values()];
    if (left.length > 0) {
      for (const r of left) {
        r.reason = 'shutdown';
        r.abort.abort();
      }
      // Each attempt hands back only the row it still holds (the same guard, row by row).
      const attempts = left.map((r) => ({ id: r.job.id, attempt: r.job.lease.attempt }));
      await handBackAtShutdown(this.o.db, this.owner, attempts).catch(() => undefined);
      await notify(this.o.db, JOBS_CHANNEL, 'handback').catch(() => undefined);
      // The jobs are safely back in the queue; give the aborted renders a moment to clean up, no
      // more.
      await Promise.race([
        new Promise<void>((r) => (this.running.size === 0 ? r() : this.idle.push(r))),
        new Promise((r) => setTimeout(r, 2_000)),
      ]);
    }
    await this.listener.stop();
  }
}
