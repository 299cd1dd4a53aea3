// The render worker. A queued generation is its own job: a worker claims it with SKIP LOCKED and holds
// a lease it renews while rendering. A worker that dies stops renewing, the lease lapses within
// LEASE_SECONDS, and any worker claims the job again (attempts counts claims, so a render that keeps
// crashing its worker ends failed and refunded); claim.ts picks which job, fairly. Every write for an
// attempt is guarded by its fencing token (db/lease.ts: the owner and the attempt number of its claim) and
// each attempt stores its output under its own key, so a late, stalled or duplicate attempt can never move
// money, resurrect a generation, or touch the file of the attempt that won.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { RenderError, type ModelBackend, type RenderContext } from '../backends/types.ts';
import { ProgressWriter } from './progress.ts';
import { transaction, type Db } from '../db/pool.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import type { ModelDef } from '../domain/catalog.ts';
import type { Storage } from '../storage/storage.ts';
import { CANCEL_CHANNEL, GENERATION_CHANGED_CHANNEL, JOBS_CHANNEL, notify } from '../db/channels.ts';
import { AfterCommitNotifier } from '../db/notify-after-commit.ts';
import { Listener } from '../db/listener.ts';
import { Claimer } from './claim.ts';
import type { ClaimedJob, Refunder } from './types.ts';
import { attemptOutputKey, earlierAttemptOutputKeys } from '../storage/output-keys.ts';
import {
  handBackAtShutdown, renewLease, retryLater, succeedWithFile, succeedWithText,
} from '../db/generations-attempt.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { PoolState } from './pool-claim.ts';
import type { LiveText } from './live-text.ts';
import { generationMessages } from '../db/generation-messages.ts';

export const LEASE_SECONDS = 15;
const HEARTBEAT_MS = 4_000;
const POLL_MS = 1_000;

interface Running { job: ClaimedJob; abort: AbortController; reason: 'cancelled' | 'shutdown' | 'timeout' | null }

const textTooLarge = (limit: number) =>
  new RenderError('OUTPUT_TOO_LARGE', `The model's text is longer than ${limit} bytes.`, false);

const attemptKey = (job: ClaimedJob) => `${job.id}-${job.lease.attempt}`;

// A backend gets this long after its abort to return before the worker stops waiting for it.
const ABANDON_AFTER_ABORT_MS = 10_000;

export interface WorkerOptions {
  db: Db;
  /** Claims and lease renewals: a small pool of its own (so API traffic cannot starve dispatch) with async commits. */
  claimDb: Db;
  databaseUrl: string;
  /** The refunds of failed renders (services/ledger.ts). */
  ledger: Refunder;
  catalog: Catalog;
  backendFor: (model: ModelDef) => ModelBackend;
  storage: Storage;
  concurrency: number;
  /** Renders of one account running at once, cluster-wide; 0 = no limit. */
  accountConcurrency: number;
  log: Logger;
  metrics: Metrics;
  /** The upload reader of a render (src/queue/upload-reader.ts); without it, no input is an upload. */
  readUpload?: (generationId: string) => RenderContext['readUpload'];
  /** Seconds a stored output is kept after the render (0 = forever): its expires_at. */
  outputRetentionSeconds?: number;
  /** Models rendered by pools of servers, with this process's view of each server's health (pool-claim.ts). */
  pools?: Map<string, PoolState>;
  /** Where chat renders publish their text as it streams (/openai/v1 streams of this process read it). */
  liveText?: LiveText;
  /** The most text a render may answer (UTF-8 bytes); past it the render fails, refunded. */
  textOutputLimitBytes?: number;
}

export class Worker {
  readonly owner = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  /** Renders in progress, by attempt (`<generation id>-<attempt>`): two attempts of one render never share an entry. */
  private running = new Map<string, Running>();
  private listener: Listener;
  private pollTimer: NodeJS.Timeout | null = null;
  /** The claim loop in progress, if any (stop() waits for it, so that no claimed job is left behind). */
  private filling: Promise<void> | null = null;
  private fillAgain = false;
  private stopping = false;
  private idle: Array<() => void> = [];

  private claimer: Claimer;
  /** Claims change a generation's startedAt; API caches hear of it from here, after the claim's commit. */
  private startedNotifier: AfterCommitNotifier;
  private tmpDir = os.tmpdir(); // read once: os.tmpdir() consults the environment on every call

  constructor(private o: WorkerOptions) {
    const limits = new Map(o.catalog.models.filter((m) => m.concurrency).map((m) => [m.id, m.concurrency!]));
    this.claimer = new Claimer(o.claimDb, limits, this.owner, LEASE_SECONDS, o.accountConcurrency > 0 ? o.accountConcurrency : null, o.pools);
    this.startedNotifier = new AfterCommitNotifier(o.claimDb, GENERATION_CHANGED_CHANNEL);
    this.listener = new Listener(o.databaseUrl, [JOBS_CHANNEL, CANCEL_CHANNEL], (ch, payload) => {
      if (ch === JOBS_CHANNEL) this.fill();
      else this.cancelGeneration(payload);
    }, () => this.fill(), (m) => o.log.warn(m));
  }

  async start(): Promise<void> {
    await this.listener.start();
    this.pollTimer = setInterval(() => this.fill(), POLL_MS);
    this.fill();
  }

  /** Claims jobs until every slot is busy or nothing is runnable. Re-entrant calls coalesce. */
  fill(): void {
    if (this.stopping) return;
    if (this.filling) { this.fillAgain = true; return; }
    // Cleared in a callback, which always runs after this assignment, even when fillSlots had nothing to do.
    this.filling = this.fillSlots().finally(() => { this.filling = null; });
  }

  private async fillSlots(): Promise<void> {
    try {
      do {
        this.fillAgain = false;
        while (!this.stopping && this.running.size < this.o.concurrency) {
          // A stalled event loop (a renderer blocking it): take nothing more until it has run freely for a
          // while; the poll timer tries again. Renders already running go on.
          if (this.o.metrics.eventLoop.stalledNow()) { this.o.metrics.claimsSkippedStalled.inc(); break; }
          // Every free slot in one claim: one round trip however many jobs a burst of creates queued.
          const free = this.o.concurrency - this.running.size;
          const jobs = await this.claim(free);
          for (const job of jobs) void this.run(job);
          // Fewer than asked for: nothing else was runnable as this claim saw the queue. A job committed
          // since then sends a NOTIFY, and that fill() call makes this loop go round again.
          if (jobs.length < free) break;
        }
      } while (this.fillAgain && !this.stopping);
    } catch (e) {
      this.o.log.warn({ err: e }, 'claiming a job failed');
    }
  }

  private async claim(slots: number): Promise<ClaimedJob[]> {
    const jobs = await this.claimer.claim(slots);
    for (const job of jobs) {
      this.o.metrics.queueWait.observe({ model: job.model_id }, Math.max(0, job.waited));
      this.startedNotifier.send(job.id); // its startedAt is set: cached polls must drop it
    }
    return jobs;
  }

  /** Stops every attempt of a generation running here (cancelled or deleted by its owner). */
  private cancelGeneration(id: string) {
    for (const r of this.running.values()) if (r.job.id === id) this.cancelAttempt(r);
  }

  private cancelAttempt(r: Running) {
    if (!r.abort.signal.aborted) { r.reason = 'cancelled'; r.abort.abort(); }
  }

  private async run(job: ClaimedJob): Promise<void> {
    const state: Running = { job, abort: new AbortController(), reason: null };
    const key = attemptKey(job);
    this.running.set(key, state);
    const log = this.o.log.child({ generationId: job.id, modelId: job.model_id, attempt: job.attempts });
    const heartbeat = setInterval(() => {
      renewLease(this.o.claimDb, job.id, job.lease, LEASE_SECONDS).then((held) => {
        if (!held) this.cancelAttempt(state); // cancelled, deleted, or superseded by a later attempt: stop rendering
      }, () => { /* database briefly away: the lease covers a few missed beats */ });
    }, HEARTBEAT_MS);
    const scratch = new ScratchDir(this.tmpDir, job.id);
    const progress = new ProgressWriter(this.o.claimDb, job.id, job.lease);
    try {
      const model = this.o.catalog.get(job.model_id)?.def;
      if (!model) throw new RenderError('MODEL_UNAVAILABLE', `The model ${job.model_id} is no longer in the catalog.`, false);
      if (job.attempts > model.maxAttempts) {
        throw new RenderError('RENDER_ABANDONED', 'The render stopped its worker repeatedly and was given up.', false);
      }
      log.info('render started');
      const t0 = performance.now();
      // A chat server's render made from a chat request is sent that conversation (migrations/016).
      const messages = model.backend.driver === 'openai' ? await generationMessages(this.o.db, job.id) : null;
      const live = this.o.liveText;
      const out = await this.guarded(state, model, this.o.backendFor(model).run(job.inputs, {
        signal: state.abort.signal, get workDir() { return scratch.path(); }, timeLimitSeconds: model.timeLimitSeconds, progress: progress.report,
        attemptId: key, readUpload: this.o.readUpload?.(job.id) ?? (async () => null),
        ...(job.backend_url ? { backendUrl: job.backend_url } : {}),
        ...(messages ? { messages } : {}), ...(live ? { textPiece: (p: string) => live.publish(job.id, key, p) } : {}),
      })).finally(() => this.o.metrics.renderDuration.observe({ model: job.model_id }, (performance.now() - t0) / 1000));
      if (state.abort.signal.aborted) return;
      if (await this.succeed(job, out)) {
        this.o.metrics.renders.inc({ model: job.model_id, status: 'succeeded' });
        if (out.kind === 'text') live?.succeeded(job.id, out.text);
      }
      log.info({ ms: Math.round(performance.now() - t0) }, 'render finished');
    } catch (e) {
      if (state.reason === 'cancelled') { log.info('render cancelled'); return; }
      if (state.reason === 'shutdown') return; // handed back to the queue by stop()
      await this.fail(job, e, log);
    } finally {
      clearInterval(heartbeat);
      progress.stop();
      this.o.liveText?.end(job.id, key);
      this.running.delete(key);
      this.fill(); // the next job's claim need not wait for this one's clean-up
      await scratch.remove();
      if (this.running.size === 0) this.idle.splice(0).forEach((f) => f());
    }
  }

  /**
   * The model's time limit, enforced here as well as in the backend: a backend that neither finishes nor
   * honours its abort cannot hold a worker slot (and the job) forever.
   */
  private guarded<T>(state: Running, model: ModelDef, work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    let abandon: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      const giveUp = () => {
        abandon = setTimeout(() => reject(new RenderError('RENDER_TIMEOUT',
          `The render did not stop within ${ABANDON_AFTER_ABORT_MS / 1000} s of being stopped.`, true)), ABANDON_AFTER_ABORT_MS);
      };
      timer = setTimeout(() => {
        if (!state.abort.signal.aborted) { state.reason = 'timeout'; state.abort.abort(); }
        reject(new RenderError('RENDER_TIMEOUT', `The render ran past its time limit of ${model.timeLimitSeconds} s.`, true));
      }, model.timeLimitSeconds * 1000 + 2_000);
      state.abort.signal.addEventListener('abort', giveUp, { once: true });
    });
    work.catch(() => { /* settled after the race was decided: nothing left to report */ });
    return Promise.race([work, limit]).finally(() => { clearTimeout(timer); clearTimeout(abandon); });
  }

  /** Records the output; false when the generation left `queued` meanwhile (cancelled) and the output was dropped. */
  private async succeed(job: ClaimedJob, out: Awaited<ReturnType<ModelBackend['run']>>): Promise<boolean> {
    if (out.kind === 'text') {
      // Drivers stop reading past the limit; this also holds for renderers that made the text here.
      const limit = this.o.textOutputLimitBytes ?? 1024 * 1024;
      if (out.text.length > limit || Buffer.byteLength(out.text) > limit) throw textTooLarge(limit);
      const recorded = await succeedWithText(this.o.db, job.id, job.lease, out.text);
      if (!recorded) this.o.log.info({ generationId: job.id }, 'render finished after it was cancelled; output dropped');
      return recorded;
    }
    const key = attemptOutputKey(job.id, job.lease.attempt, out.contentType);
    let stored;
    try {
      stored = await this.o.storage.put(key, out.path, out.contentType);
    } catch (e) {
      throw new RenderError('STORAGE_FAILED', 'The output could not be stored.', false, { cause: e });
    }
    let recorded;
    try {
      recorded = await succeedWithFile(this.o.db, job.id, job.lease, {
        key, contentType: out.contentType, bytes: stored.bytes, etag: stored.etag,
        retentionSeconds: this.o.outputRetentionSeconds ?? 0,
      });
    } catch (e) {
      // Unknown whether it committed: the file may be the generation's now, so it stays. (An orphan at
      // worst, under this attempt's own key: never the file of another attempt.)
      throw new RenderError('STORAGE_FAILED', 'The output was stored but could not be recorded.', true, { cause: e });
    }
    // This attempt lost (cancelled, deleted, or superseded): its own file goes; the winner's key is another.
    if (!recorded) await this.o.storage.delete(key).catch(() => undefined);
    else if (job.lease.attempt > 1) await this.removeEarlierAttempts(job);
    return recorded;
  }

  /**
   * After a retried render is recorded: the files earlier attempts of it stored and never recorded (a
   * process killed between its upload and its UPDATE) are removed. None of them can be recorded any more:
   * only this attempt's lease could, and it did. An earlier attempt still running stores its file after
   * this, fails its guarded UPDATE and removes that file itself.
   */
  private async removeEarlierAttempts(job: ClaimedJob): Promise<void> {
    await Promise.all(earlierAttemptOutputKeys(job.id, job.lease.attempt).map((k) => this.o.storage.delete(k).catch((e: unknown) => {
      this.o.log.warn({ err: e, key: k, generationId: job.id }, 'could not remove an earlier attempt\'s output');
    })));
  }

  private async fail(job: ClaimedJob, e: unknown, log: Logger) {
    let err = e instanceof RenderError ? e : new RenderError('RENDER_FAILED', 'The renderer failed unexpectedly.', false, { cause: e });
    if (!(e instanceof RenderError)) log.error({ err: e }, 'renderer threw an unexpected error');
    const model = this.o.catalog.get(job.model_id)?.def;
    try {
      if (err.retryable && model && job.attempts < model.maxAttempts) {
        // The server's own Retry-After when it asked for longer (within reason), else doubling delays.
        const backoff = Math.max(Math.min(60, 2 ** job.attempts), Math.min(300, err.retryAfterSeconds ?? 0));
        // An input server that made one attempt time out gets one more chance, not every attempt: a slow
        // address is the client's, and each timeout held a worker slot for the whole fetch time. The
        // second timeout finds fetch_timeouts > 0, retries nothing, and fails below.
        const fetchTimeout = err.code === 'INPUT_FETCH_TIMEOUT' ? 1 : 0 as const;
        const retried = await retryLater(this.o.db, job.id, job.lease, backoff, fetchTimeout);
        if (retried || fetchTimeout === 0) {
          if (retried) log.warn({ code: err.code, backoffSeconds: backoff }, `render attempt failed, will retry: ${err.message}`);
          return; // retried, or this attempt no longer holds the render
        }
        err = new RenderError(err.code, `${err.message} (the second time; not retried again)`, false);
      }
      const refunded = await transaction(this.o.db, (tx) =>
        this.o.ledger.refund(tx, job.id, 'queued', { status: 'failed', code: err.code, message: err.message }, job.lease));
      if (refunded === null) return;
      this.o.metrics.renders.inc({ model: job.model_id, status: 'failed' });
      this.o.metrics.refundedCents.inc(refunded);
      log.warn({ code: err.code }, `render failed and was refunded: ${err.message}`);
    } catch (dbErr) {
      // The database is away: the lease lapses and the job is claimed again, so nothing is lost.
      log.error({ err: dbErr }, 'could not record the render failure; the job will run again');
    }
  }

  /** Render attempts in progress in this process (tests and reports). */
  get attemptsRunning(): number { return this.running.size; }

  /** Stops claiming; waits up to `graceMs` for running renders, then hands the rest back to the queue. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    await this.filling; // a claim in flight: its jobs are running (or handed back below) like the rest
    if (this.running.size > 0) {
      await Promise.race([new Promise<void>((r) => this.idle.push(r)), new Promise((r) => setTimeout(r, graceMs))]);
    }
    const left = [...this.running.values()];
    if (left.length > 0) {
      for (const r of left) { r.reason = 'shutdown'; r.abort.abort(); }
      // Each attempt hands back only the row it still holds (the same guard, row by row).
      await handBackAtShutdown(this.o.db, this.owner, left.map((r) => ({ id: r.job.id, attempt: r.job.lease.attempt })))
        .catch(() => undefined);
      await notify(this.o.db, JOBS_CHANNEL, 'handback').catch(() => undefined);
      // The jobs are safely back in the queue; give the aborted renders a moment to clean up, no more.
      await Promise.race([new Promise<void>((r) => (this.running.size === 0 ? r() : this.idle.push(r))), new Promise((r) => setTimeout(r, 2_000))]);
    }
    await this.listener.stop();
  }
}

/**
 * A render's private scratch directory, made on first use: text renderers never touch theirs, and on a
 * journalling file system making and removing a directory costs about a quarter of a millisecond, as
 * much as the claim. Made synchronously because the backend reads it as a plain property
 * (RenderContext.workDir); the name carries the render's id, to find its processes by.
 */
class ScratchDir {
  private dir: string | null = null;
  private removed = false;

  constructor(private parent: string, private generationId: string) {}

  path(): string {
    // A backend abandoned past its time limit must not make a directory that nobody would remove.
    if (this.removed && !this.dir) throw new Error('the render is over; its scratch directory is gone');
    this.dir ??= fs.mkdtempSync(path.join(this.parent, `rendergate-${this.generationId}-`));
    return this.dir;
  }

  /** Removes the directory, if it was made: one rmdir when the render left it empty, else the recursive walk. */
  async remove(): Promise<void> {
    this.removed = true;
    if (!this.dir) return;
    await fsp.rmdir(this.dir).catch(() => fsp.rm(this.dir!, { recursive: true, force: true })).catch(() => undefined);
  }
}
