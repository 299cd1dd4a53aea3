// What a finished render attempt records: its output (stored under the attempt's own key, then the
// guarded UPDATE), or its failure (a retry later, or failed and refunded through the ledger). Every
// statement is guarded by the attempt's lease (db/lease.ts), so a superseded attempt changes
// nothing.
import type { Logger } from 'pino';
import { RenderError, type ModelBackend } from '../backends/types.ts';
import type { Db } from '../db/pool.ts';
import { retryLater, succeedWithFile, succeedWithText } from '../db/generations-attempt.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { attemptOutputKey, earlierAttemptOutputKeys } from '../storage/output-keys.ts';
import type { Storage } from '../storage/storage.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { ClaimedJob } from './types.ts';
import { storePoster } from './poster.ts';

const textTooLarge = (limit: number) =>
  new RenderError('OUTPUT_TOO_LARGE', `The model's text is longer than ${limit} bytes.`, false);

export interface OutcomeOptions {
  db: Db;
  storage: Storage;
  catalog: Catalog;
  ledger: Ledger;
  log: Logger;
  metrics: Metrics;
  /** Seconds a stored output is kept after the render (0 = forever): its expires_at. */
  outputRetentionSeconds?: number;
  /** The most text a render may answer (UTF-8 bytes); past it the render fails, refunded. */
  textOutputLimitBytes?: number;
}

export class AttemptOutcome {
  constructor(private o: OutcomeOptions) {}

  /**
   * Records the output; false when the generation left `queued` meanwhile (cancelled) and the
   * output was dropped.
   */
  async succeed(job: ClaimedJob, out: Awaited<ReturnType<ModelBackend['run']>>): Promise<boolean> {
    if (out.kind === 'text') {
      // Drivers stop reading past the limit; this also holds for renderers that made the text here.
      const limit = this.o.textOutputLimitBytes ?? 1024 * 1024;
      if (out.text.length > limit || Buffer.byteLength(out.text) > limit) throw textTooLarge(limit);
      const recorded = await succeedWithText(this.o.db, job.id, job.lease, out.text, out.tokens);
      if (!recorded) {
        const why = 'render finished after it was cancelled; output dropped';
        this.o.log.info({ generationId: job.id }, why);
      }
      return recorded;
    }
    const key = attemptOutputKey(job.id, job.lease.attempt, out.contentType);
    let stored;
    try {
      stored = await this.o.storage.put(key, out.path, out.contentType);
    } catch (e) {
      throw new RenderError('STORAGE_FAILED', 'The output could not be stored.', false, {
        cause: e,
      });
    }
    // The still History shows, stored before the row names the video (a render shown as succeeded
    // has its poster, when one can be made).
    if (out.contentType.startsWith('video/'))
      await storePoster(this.o.storage, this.o.log, key, out.path);
    let recorded;
    try {
      recorded = await succeedWithFile(this.o.db, job.id, job.lease, {
        key,
        contentType: out.contentType,
        bytes: stored.bytes,
        etag: stored.etag,
        retentionSeconds: this.o.outputRetentionSeconds ?? 0,
      });
    } catch (e) {
      // Unknown whether it committed: the file may be the generation's now, so it stays. (An orphan
      // at worst, under this attempt's own key: never the file of another attempt.)
      throw new RenderError(
        'STORAGE_FAILED',
        'The output was stored but could not be recorded.',
        true,
        { cause: e },
      );
    }
    // This attempt lost (cancelled, deleted, or superseded): its own file goes; the winner's key is
    // another.
    if (!recorded) await this.o.storage.delete(key).catch(() => undefined);
    else if (job.lease.attempt > 1) await this.removeEarlierAttempts(job);
    return recorded;
  }

  /**
   * After a retried render is recorded: the files earlier attempts of it stored and never recorded
   * (a process killed between its upload and its UPDATE) are removed. None of them can be recorded
   * any more: only this attempt's lease could, and it did. An earlier attempt still running stores
   * its file after this, fails its guarded UPDATE and removes that file itself.
   */
  private async removeEarlierAttempts(job: ClaimedJob): Promise<void> {
    const keys = earlierAttemptOutputKeys(job.id, job.lease.attempt);
    await Promise.all(
      keys.map((k) =>
        this.o.storage.delete(k).catch((e: unknown) => {
          const why = "could not remove an earlier attempt's output";
          this.o.log.warn({ err: e, key: k, generationId: job.id }, why);
        }),
      ),
    );
  }

  /** Records a failed attempt; true when that made the generation final (failed and refunded). */
  async fail(job: ClaimedJob, e: unknown, log: Logger): Promise<boolean> {
    let err =
      e instanceof RenderError
        ? e
        : new RenderError('RENDER_FAILED', 'The renderer failed unexpectedly.', false, {
            cause: e,
          });
    if (!(e instanceof RenderError)) log.error({ err: e }, 'renderer threw an unexpected error');
    const model = this.o.catalog.get(job.model_id)?.def;
    try {
      if (err.retryable && model && job.attempts < model.maxAttempts) {
        // The server's own Retry-After when it asked for longer (within reason), else doubling
        // delays.
        const backoff = Math.max(
          Math.min(60, 2 ** job.attempts),
          Math.min(300, err.retryAfterSeconds ?? 0),
        );
        // An input server that made one attempt time out gets one more chance, not every attempt: a
        // slow address is the client's, and each timeout held a worker slot for the whole fetch
        // time. The second timeout finds fetch_timeouts > 0, retries nothing, and fails below.
        const fetchTimeout = err.code === 'INPUT_FETCH_TIMEOUT' ? 1 : (0 as const);
        const retried = await retryLater(this.o.db, job.id, job.lease, backoff, fetchTimeout);
        if (retried || fetchTimeout === 0) {
          if (retried) {
            log.warn(
              { code: err.code, backoffSeconds: backoff },
              `render attempt failed, will retry: ${err.message}`,
            );
          }
          return false; // retried, or this attempt no longer holds the render
        }
        err = new RenderError(
          err.code,
          `${err.message} (the second time; not retried again)`,
          false,
        );
      }
      const reason = { status: 'failed' as const, code: err.code, message: err.message };
      const refunded = await this.o.ledger.refund(job.id, 'queued', reason, job.lease);
      if (refunded === null) return false;
      this.o.metrics.renders.inc({ model: job.model_id, status: 'failed' });
      this.o.metrics.refundedCents.inc(refunded);
      log.warn({ code: err.code }, `render failed and was refunded: ${err.message}`);
      return true;
    } catch (dbErr) {
      // The database is away: the lease lapses and the job is claimed again, so nothing is lost.
      log.error({ err: dbErr }, 'could not record the render failure; the job will run again');
      return false;
    }
  }
}
