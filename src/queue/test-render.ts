// Test renders (docs/api.md "Test keys"): the API process that created one makes its result at once,
// without a worker or a backend, and records it like a render: started, then succeeded (or, for an
// input asking for `rendergate:fail`, refunded with MODEL_FAILED), each change with its webhook event
// and its change notification, so polls, `Prefer: wait`, cancel and DELETE behave as for live renders.
// Test renders are never claimed by workers (migrations/014); one whose process died before finishing
// it is ended by the janitor at its deadline, like any render stuck past its own.
import type { Logger } from 'pino';
import { transaction, type Db } from '../db/pool.ts';
import { finishTestRenders, startTestRenders, type TestOutput } from '../db/generations.ts';
import { attemptOutputKey } from '../storage/output-keys.ts';
import type { Refunder } from './types.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import type { ResolvedInputs } from '../domain/catalog.ts';
import type { Storage } from '../storage/storage.ts';
import { TestOutputs, testText } from './test-output.ts';

/** The input text that makes a test render fail, and the one that makes its create answer 402. */
export const FAIL_MARK = 'rendergate:fail';
export const INSUFFICIENT_MARK = 'rendergate:insufficient';

/** True when a `prompt` or `text` input contains `mark`. */
export function asks(inputs: Record<string, unknown>, mark: string): boolean {
  return [inputs.prompt, inputs.text].some((v) => typeof v === 'string' && v.includes(mark));
}

interface Failure {
  code: string;
  message: string;
}

/** Runs `fn` again when PostgreSQL ended it as a deadlock's victim (all of it rolled back). */
async function deadlockRetried<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if ((e as { code?: string }).code !== '40P01' || attempt >= 5) throw e;
    }
  }
}

/** Test renders recorded per transaction: one commit (and one WAL flush) for many. */
const MAX_BATCH = 64;

export interface TestRenderJob {
  id: string;
  modelId: string;
  inputs: ResolvedInputs;
}

/**
 * Test renders waiting in this process are made a batch at a time: their files copied to storage at
 * once, then recorded in one transaction (started, then succeeded or, for rendergate:fail, refunded).
 * One batch at a time: its rows are locked in one statement before any key's day row, so a batch and a
 * cancel never wait on each other in a cycle.
 */
export class TestRenders {
  private waiting: TestRenderJob[] = [];
  private running: Promise<void> | null = null;
  private outputs = new TestOutputs();
  private closed = false;

  constructor(
    private o: {
      db: Db;
      catalog: Catalog;
      storage: Storage;
      log: Logger;
      outputRetentionSeconds: number;
      /** The refund of a failing test render (services/ledger.ts: for a test render, only its key's day). */
      ledger: Refunder;
      /** Called before each test render is recorded (tests hold a render here to cancel it while queued). */
      beforeFinish?: (id: string) => Promise<void>;
    },
  ) {}

  /** Makes the render's result soon; the create has committed. */
  start(job: TestRenderJob): void {
    if (this.closed) return;
    this.waiting.push(job);
    this.pump();
  }

  private pump() {
    if (this.running || this.waiting.length === 0) return;
    const batch = this.waiting.splice(0, MAX_BATCH);
    this.running = this.render(batch)
      .catch((err) =>
        this.o.log.warn({ err, generationIds: batch.map((j) => j.id) }, 'test renders failed'),
      )
      .finally(() => {
        this.running = null;
        this.pump();
      });
  }

  /** The output of one test render (a file copied to storage under its own key), or why it fails. */
  private async output(job: TestRenderJob): Promise<TestOutput | Failure> {
    const def = this.o.catalog.get(job.modelId)?.def;
    if (!def) return { code: 'MODEL_FAILED', message: 'The model is no longer in the catalog.' };
    if (asks(job.inputs, FAIL_MARK))
      return {
        code: 'MODEL_FAILED',
        message: `The test render failed because its input contains "${FAIL_MARK}".`,
      };
    if (def.output.type === 'text') return { kind: 'text', text: testText(def, job.inputs) };
    const file = await this.outputs.file(def, job.inputs);
    const key = attemptOutputKey(job.id, 1, file.contentType);
    const stored = await this.o.storage.put(key, file.path, file.contentType);
    return {
      kind: 'file',
      key,
      contentType: file.contentType,
      bytes: stored.bytes,
      etag: stored.etag,
    };
  }

  private async render(batch: TestRenderJob[]): Promise<void> {
    const outs = await Promise.all(
      batch.map((j) =>
        this.output(j).catch((err): Failure => {
          this.o.log.warn({ err, generationId: j.id }, 'test render output not stored');
          return { code: 'STORAGE_FAILED', message: 'The output could not be stored.' };
        }),
      ),
    );
    if (this.o.beforeFinish) await Promise.all(batch.map((j) => this.o.beforeFinish!(j.id)));
    const recorded = await deadlockRetried(() =>
      transaction(this.o.db, async (tx) => {
        const started = await startTestRenders(
          tx,
          batch.map((j) => j.id),
        );
        const done: { id: string; out: TestOutput }[] = [];
        for (const [i, j] of batch.entries()) {
          const out = outs[i];
          if (!started.has(j.id)) continue;
          if ('code' in out)
            await this.o.ledger.refund(tx, j.id, 'queued', { status: 'refunded', ...out });
          else done.push({ id: j.id, out });
        }
        return finishTestRenders(tx, done, this.o.outputRetentionSeconds);
      }),
    );
    // Cancelled or deleted first: the file is nobody's. (Had the commit failed, the files stay: orphans at
    // worst, never a succeeded render without its file.)
    await Promise.all(
      batch.map(async (j, i) => {
        const out = outs[i];
        if ('kind' in out && out.kind === 'file' && !recorded.has(j.id))
          await this.o.storage.delete(out.key).catch(() => undefined);
      }),
    );
  }

  /** Finishes the batch under way; renders not begun stay queued until their deadline (the janitor). */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting = [];
    await this.running;
    await this.outputs.close();
  }
}
