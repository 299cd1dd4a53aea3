// Test renders (docs/api.md "Test keys"): the API process that created one makes its result at once,
// without a worker or a backend. When the result is at hand (text, or a file made and stored before)
// and no test webhook endpoint of its account waits for the events of a change (only test endpoints
// receive test renders' events, migrations/025), the create itself records it final, in its own
// statement (the ledger's test record, src/ledger/sql/create_generations.sql): one write and one commit, as a live create. The others are recorded
// like a render: started, then succeeded (or, for an input asking for `rendergate:fail`, refunded
// with MODEL_FAILED), each change with its webhook event and its change notification, so polls,
// `Prefer: wait`, cancel and DELETE behave as for live renders.
// Test renders are never claimed by workers (migrations/014); one whose process died before finishing
// it is ended by the janitor at its deadline, like any render stuck past its own.
// A test render's input addresses are checked as its model's renderer would fetch them, without
// fetching (backends/local/input-check.ts): one a live render would refuse ends the same way, failed
// with the live refusal's code and message.
import type { Logger } from 'pino';
import type { Db } from '../db/pool.ts';
import { finishTestRenders, startTestRenders, type TestOutput } from '../db/generations-test.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import type { ModelDef, ResolvedInputs } from '../domain/catalog.ts';
import type { Storage } from '../storage/storage.ts';
import { TestOutputs, testText } from './test-output.ts';
import { StoredTestFiles } from './test-stored.ts';
import { ORPHAN_MIN_AGE_MS } from './orphans.ts';
import type { RefundReason } from '../ledger/ledger.ts';
import type { ModelBackend } from '../backends/types.ts';
import { InputAddressCheck } from '../backends/local/input-check.ts';

/** The input text that makes a test render fail, and the one that makes its create answer 402. */
export const FAIL_MARK = 'rendergate:fail';
export const INSUFFICIENT_MARK = 'rendergate:insufficient';

/** True when a `prompt` or `text` input contains `mark`. */
export function asks(inputs: Record<string, unknown>, mark: string): boolean {
  return [inputs.prompt, inputs.text].some((v) => typeof v === 'string' && v.includes(mark));
}

/** How a test render ends when it fails: `failed` where a live render's input is refused. */
type Failure = RefundReason;

/** Test renders recorded per statement: one commit (and one WAL flush) for many. */
const MAX_BATCH = 64;

export interface TestRenderJob {
  id: string;
  modelId: string;
  inputs: ResolvedInputs;
}

/**
 * Most test renders are recorded final by their create (resultNow, the ledger's test record): those whose
 * result is at hand and whose account has no test endpoint for the events of a change. The others
 * wait in this process and are made a batch at a time: their outputs found (a file's is a stored
 * object shared by every test render of the same content: test-stored.ts), then recorded in two
 * statements, each its own transaction: one marks started those whose account has a test endpoint
 * for `generation.started` (the event needs a change of its own), the next finishes the succeeded
 * ones (and sets the others' started_at with it). A failing one (an input address refused,
 * rendergate:fail, its file not stored) is then refunded in a transaction of its own, as a cancel is
 * (its row, then its key's day).
 * Why not one transaction: a second UPDATE of a row the same transaction updated re-checks the row's
 * foreign keys (PostgreSQL skips that check only for a row version of another transaction), which
 * takes FOR KEY SHARE on each render's account, one by one in the batch's order, while create batches
 * hold FOR UPDATE on theirs in the order of their ids: the two deadlocked (40P01). As it is, a test
 * render batch locks no account row and at most one key's day row at a time.
 */
export class TestRenders {
  private waiting: TestRenderJob[] = [];
  private running: Promise<void> | null = null;
  private outputs = new TestOutputs();
  private stored: StoredTestFiles;
  private addresses: InputAddressCheck | null;
  private closed = false;

  constructor(
    private o: {
      db: Db;
      catalog: Catalog;
      storage: Storage;
      log: Logger;
      outputRetentionSeconds: number;
      /** The refund of a failing test render (for a test render, only its key's day). */
      ledger: Ledger;
      /** Called before each test render is recorded (tests hold a render here to cancel it while queued). */
      beforeFinish?: (id: string) => Promise<void>;
      /**
       * Each model's backend: the input addresses its run would fetch (ModelBackend.inputUrls). In
       * role api, models on servers have none built: their backends fetch no input anyway.
       */
      backendFor?: (def: ModelDef) => ModelBackend | undefined;
      /** How those addresses are checked: as the live fetch would, without fetching. */
      addresses?: { allowPrivate: boolean; publicUrl: string };
    },
  ) {
    this.stored = new StoredTestFiles(o.storage, ORPHAN_MIN_AGE_MS / 2);
    this.addresses = o.addresses
      ? new InputAddressCheck({
          allowPrivate: o.addresses.allowPrivate,
          uploadPrefix: `${o.addresses.publicUrl}/v1/uploads/`,
        })
      : null;
  }

  /**
   * The result of a test render of `modelId` with `inputs` if it is at hand now, for its create to
   * record it (the ledger's test record, src/ledger/sql/create_generations.sql): the text, or a file made and stored already (a stored object named
   * only within its refresh time, test-stored.ts). Null when it fails (rendergate:fail, or an input
   * address a live render would refuse), when the verdict on its input addresses needs a lookup, when
   * its file is still to be made or (again) stored, or when renders are held before they are recorded
   * (tests): the render is then made after its create, by `start`, which makes and stores that file
   * for the next ones.
   */
  resultNow(modelId: string, inputs: ResolvedInputs): TestOutput | null {
    if (this.closed || this.o.beforeFinish) return null;
    const def = this.o.catalog.get(modelId)?.def;
    if (!def || asks(inputs, FAIL_MARK)) return null;
    const urls = this.fetched(def, inputs);
    if (urls.length > 0 && this.addresses && this.addresses.now(urls) !== null) return null;
    if (def.output.type === 'text') return { kind: 'text', text: testText(def, inputs) };
    const file = this.outputs.ready(def, inputs);
    const stored = file && this.stored.ready(file);
    return stored ? { kind: 'file', ...stored } : null;
  }

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

  /** The input addresses a live render of `def` fetches itself, in its renderer's order. */
  private fetched(def: ModelDef, inputs: ResolvedInputs): string[] {
    return this.o.backendFor?.(def)?.inputUrls?.(inputs) ?? [];
  }

  /** The output of one test render (a shared stored object, or text), or why it fails. */
  private async output(job: TestRenderJob): Promise<TestOutput | Failure> {
    const def = this.o.catalog.get(job.modelId)?.def;
    if (!def)
      return {
        status: 'refunded',
        code: 'MODEL_FAILED',
        message: 'The model is no longer in the catalog.',
      };
    // First, as a live render fetches its inputs before it renders anything.
    const urls = this.fetched(def, job.inputs);
    const refused = urls.length > 0 ? await this.addresses?.check(urls) : null;
    if (refused) return { status: 'failed', code: refused.code, message: refused.message };
    if (asks(job.inputs, FAIL_MARK))
      return {
        status: 'refunded',
        code: 'MODEL_FAILED',
        message: `The test render failed because its input contains "${FAIL_MARK}".`,
      };
    if (def.output.type === 'text') return { kind: 'text', text: testText(def, job.inputs) };
    const stored = await this.stored.object(await this.outputs.file(def, job.inputs));
    return { kind: 'file', ...stored };
  }

  private async render(batch: TestRenderJob[]): Promise<void> {
    const outs = await Promise.all(
      batch.map((j) =>
        this.output(j).catch((err): Failure => {
          this.o.log.warn({ err, generationId: j.id }, 'test render output not stored');
          return {
            status: 'refunded',
            code: 'STORAGE_FAILED',
            message: 'The output could not be stored.',
          };
        }),
      ),
    );
    if (this.o.beforeFinish) await Promise.all(batch.map((j) => this.o.beforeFinish!(j.id)));
    // Started first where an endpoint takes `generation.started`; renders cancelled or deleted
    // meanwhile are passed over by every statement's guard (and had no file of their own).
    await startTestRenders(
      this.o.db,
      batch.map((j) => j.id),
    );
    const done: { id: string; out: TestOutput }[] = [];
    const failed: { id: string; failure: Failure }[] = [];
    for (const [i, j] of batch.entries()) {
      const out = outs[i];
      if ('status' in out) failed.push({ id: j.id, failure: out });
      else done.push({ id: j.id, out });
    }
    await finishTestRenders(this.o.db, done, this.o.outputRetentionSeconds);
    for (const f of failed) await this.o.ledger.refund(f.id, 'queued', f.failure);
  }

  /** Finishes the batch under way; renders not begun stay queued until their deadline (the janitor). */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting = [];
    await this.running;
    await this.outputs.close();
  }
}
