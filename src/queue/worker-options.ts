// What a worker is given (worker.ts): its pools, the catalog and backends, storage, its limits, and
// the process's other parts it tells or is woken by.
import type { Logger } from 'pino';
import type { ModelBackend, RenderContext } from '../backends/types.ts';
import type { Db } from '../db/pool.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import type { ModelDef } from '../domain/catalog.ts';
import type { Storage } from '../storage/storage.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { PoolState } from './pool-claim.ts';
import type { LiveText } from './live-text.ts';
import type { JobWake } from './job-wake.ts';
import type { RecordingHere } from './recording-here.ts';

export interface WorkerOptions {
  db: Db;
  /**
   * Claims and lease renewals: a small pool of its own (so API traffic cannot starve dispatch) with
   * async commits.
   */
  claimDb: Db;
  databaseUrl: string;
  /** The refunds of failed renders. */
  ledger: Ledger;
  catalog: Catalog;
  backendFor: (model: ModelDef) => ModelBackend;
  storage: Storage;
  concurrency: number;
  /** Renders of one account running at once, cluster-wide; 0 = no limit. */
  accountConcurrency: number;
  log: Logger;
  metrics: Metrics;
  /**
   * The upload reader of a render (src/queue/upload-reader.ts); without it, no input is an upload.
   */
  readUpload?: (generationId: string) => RenderContext['readUpload'];
  /** Seconds a stored output is kept after the render (0 = forever): its expires_at. */
  outputRetentionSeconds?: number;
  /**
   * Models rendered by pools of servers, with this process's view of each server's health (pool-
   * claim.ts).
   */
  pools?: Map<string, PoolState>;
  /**
   * Where chat renders publish their text as it streams: /openai/v1 streams of this process read it,
   * and its relay (live-text-relay.ts) carries it to the other processes.
   */
  liveText?: LiveText;
  /** The most text a render may answer (UTF-8 bytes); past it the render fails, refunded. */
  textOutputLimitBytes?: number;
  /**
   * A render of this worker was recorded as final (succeeded, or failed and refunded): this
   * process's held requests (`Prefer: wait`) need not wait for its change notification to hear it.
   */
  onFinal?: (generationId: string) => void;
  /**
   * Outcomes this worker is recording: this process's held requests and streams are woken by the
   * worker's word rather than by the change notification that beats it (recording-here.ts).
   */
  recording?: RecordingHere;
  /** This process's creates, which wake this worker in-process (job-wake.ts). */
  jobWake?: JobWake;
}
