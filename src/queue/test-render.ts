// Test renders (docs/api.md "Test keys"): the API process that created one makes its result at once,
// without a worker or a backend, and records it like a render: started, then succeeded (or, for an
// input asking for `rendergate:fail`, refunded with MODEL_FAILED), each change with its webhook event
// and its change notification, so polls, `Prefer: wait`, cancel and DELETE behave as for live renders.
// Test renders are never claimed by workers (migrations/014); one whose process died before finishing
// it is ended by the janitor at its deadline, like any render stuck past its own.
import type { Logger } from 'pino';
import { transaction, type Db } from '../db/pool.ts';
import { finishTestRender, startTestRender, type TestOutput } from '../db/generations.ts';
import { refundGeneration } from '../db/refunds.ts';
import { attemptOutputKey } from '../db/lease.ts';
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

/** Test renders made at once by one process: enough to overlap storage copies, few database connections. */
const CONCURRENCY = 8;

export interface TestRenderJob { id: string; modelId: string; inputs: ResolvedInputs }

export class TestRenders {
  private waiting: TestRenderJob[] = [];
  private running = new Set<Promise<void>>();
  private outputs = new TestOutputs();
  private closed = false;

  constructor(private o: {
    db: Db; catalog: Catalog; storage: Storage; log: Logger; outputRetentionSeconds: number;
    /** Called before each test render is recorded (tests hold a render here to cancel it while queued). */
    beforeFinish?: (id: string) => Promise<void>;
  }) {}

  /** Makes the render's result soon; the create has committed. */
  start(job: TestRenderJob): void {
    if (this.closed) return;
    this.waiting.push(job);
    this.pump();
  }

  private pump() {
    while (this.running.size < CONCURRENCY && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      const p = this.render(job).catch((err) => this.o.log.warn({ err, generationId: job.id }, 'test render failed'))
        .finally(() => { this.running.delete(p); this.pump(); });
      this.running.add(p);
    }
  }

  private async render(job: TestRenderJob): Promise<void> {
    const def = this.o.catalog.get(job.modelId)?.def;
    if (!def) return;
    if (asks(job.inputs, FAIL_MARK)) {
      await this.o.beforeFinish?.(job.id);
      await transaction(this.o.db, async (tx) => {
        if (!await startTestRender(tx, job.id)) return;
        await refundGeneration(tx, job.id, 'queued', { status: 'refunded', code: 'MODEL_FAILED',
          message: `The test render failed because its input contains "${FAIL_MARK}".` });
      });
      return;
    }
    let out: TestOutput;
    if (def.output.type === 'text') {
      out = { kind: 'text', text: testText(def, job.inputs) };
    } else {
      const file = await this.outputs.file(def, job.inputs);
      const key = attemptOutputKey(job.id, 1, file.contentType);
      const stored = await this.o.storage.put(key, file.path, file.contentType);
      out = { kind: 'file', key, contentType: file.contentType, bytes: stored.bytes, etag: stored.etag };
    }
    await this.o.beforeFinish?.(job.id);
    const recorded = await transaction(this.o.db, async (tx) =>
      await startTestRender(tx, job.id) && finishTestRender(tx, job.id, out, this.o.outputRetentionSeconds));
    // Cancelled or deleted first: the file is nobody's. (Had the commit failed, the file stays: an
    // orphan at worst, never a succeeded render without its file.)
    if (!recorded && out.kind === 'file') await this.o.storage.delete(out.key).catch(() => undefined);
  }

  /** Finishes the renders under way; those not begun stay queued until their deadline (the janitor). */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting = [];
    await Promise.allSettled([...this.running]);
    await this.outputs.close();
  }
}
